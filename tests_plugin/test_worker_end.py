"""An xdist worker of a stackcheck run ends right after its session (stackcheck.plugin.worker_end):
it runs its exit handlers and skips pytest's last garbage collections and the interpreter's teardown,
which the controller waited for before it wrote the report."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.meta


def test_a_worker_runs_its_exit_handlers_and_skips_the_teardown(pytester, tmp_path):
    """Marks a worker leaves: its exit handler's and a temporary folder's finalizer (both run), and a
    finalizer of a reference cycle, which only a garbage collection after the session would run. A
    fresh pytest process by design: its xdist worker's end is what is tested."""
    pytester.makepyfile(
        test_one=f"""
        import atexit
        import gc
        import pathlib
        import tempfile

        MARKS = pathlib.Path({str(tmp_path)!r})
        KEPT = tempfile.TemporaryDirectory(dir=MARKS)  # its finalizer removes it at exit


        class Cycle:
            def __init__(self):
                self.me = self

            def __del__(self):
                (MARKS / "collected").write_text("a collection after the session ran")


        def test_one():
            gc.disable()  # only an explicit collection (pytest's, the interpreter's) finds the cycle
            Cycle()
            atexit.register(lambda: (MARKS / "exit-handler").write_text("ran"))
            (MARKS / "kept").write_text(KEPT.name)
        """
    )
    result = pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert (tmp_path / "exit-handler").exists(), "the worker's exit handlers ran"
    assert not Path((tmp_path / "kept").read_text()).exists(), "its temporary folder was removed"
    assert not (tmp_path / "collected").exists(), "no garbage collection after the session"
