"""Where the plugin keeps its state (issue 37, item 5): the recorder on the xdist controller alone
(a worker has only its small part), and the compile/profile work on one background service that the
run which opened it owns through ``config.stash`` and closes; nothing starts a thread at import."""

import subprocess
import sys
import threading

import pytest

from stackcheck.toolchains import background

pytestmark = pytest.mark.meta


def test_importing_the_compile_and_profile_modules_starts_no_thread():
    """A fresh interpreter: what importing the modules starts shows only where they were not imported yet."""
    code = (
        "import threading, stackcheck.run.max_graphs, stackcheck.toolchains.counters\n"
        "print(sorted(t.name for t in threading.enumerate()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['MainThread']", out


def test_a_lane_starts_on_its_first_job_and_close_forgets_what_did_not_finish():
    service = background.Background()
    assert service.lanes() == []
    gate = threading.Event()
    kept = {"running": service.submit("slow", gate.wait), "queued": service.submit("slow", lambda: None)}
    service.forget_on_close(kept)
    assert service.lanes() == ["slow"]
    threading.Timer(0.2, gate.set).start()  # the running job ends while close waits for it
    service.close()
    assert list(kept) == ["running"] and kept["running"].done(), "the queued job was dropped and forgotten"
    assert service.lanes() == []


def test_an_inner_run_leaves_the_outer_runs_service_open(pytester):
    outer = background.service()
    pytester.makepyfile("def test_inside():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "stackcheck", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert background.service() is outer, "the inner run closed a service it did not open"


def test_the_recorder_lives_on_the_controller_only(pytester):
    """Fresh processes: xdist's controller and workers are processes of their own."""
    pytest.importorskip("xdist")
    pytester.makepyfile(
        "from stackcheck.plugin.recorder import RECORDER, RUN\n\n"
        "def test_worker(request):\n"
        "    assert RUN in request.config.stash and RECORDER not in request.config.stash\n"
        "    assert request.config.pluginmanager.get_plugin('stackcheck-recorder').__class__.__name__ == 'WorkerPart'\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "stackcheck", "-p", "no:cacheprovider", "-n", "2", "--curriculum-report=r.json"
    )
    result.assert_outcomes(passed=1)
    assert (pytester.path / "r.json").exists(), "the controller's recorder wrote the report"
