"""The mutant server runs a batch of pytest sessions in one forked process (issue 36, item 3): each
session finds the modules, paths and environment the batch started with (a library's modules
stay imported), a session that hangs is
killed at its limit and the rest of the batch still runs, and a batch never holds two runs of one claim."""

import os
import tempfile
from pathlib import Path

import pytest

from stackcheck.claims import mutation
from stackcheck.claims.mutation import Runner, batches, table

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent

LEAVES = """
import os, sys
sys.path.insert(0, os.path.dirname(__file__))

def test_leaves_a_module_a_path_and_a_variable(tmp_path_factory):
    import left_behind  # noqa: F401
    import wave  # noqa: F401 - a library's module, first imported here
    os.environ["STACKCHECK_LEFT_BEHIND"] = "1"
    open(os.path.join(os.path.dirname(__file__), "pid"), "w").write(str(os.getpid()))
"""
FINDS = """
import os, sys

def test_finds_none_of_it():
    assert "left_behind" not in sys.modules
    assert "wave" in sys.modules  # kept: a library imported twice registers its parts twice
    assert not [p for p in sys.path if p.endswith(os.sep + "first")]  # the folder the first run put there
    assert "STACKCHECK_LEFT_BEHIND" not in os.environ
    open(os.path.join(os.path.dirname(__file__), "pid"), "w").write(str(os.getpid()))
"""
HANGS = "import time\n\ndef test_hangs():\n    time.sleep(600)\n"
RUNS = "def test_runs():\n    pass\n"
DIES_ONCE = """
import os, signal


def test_dies_the_first_time():
    mark = os.path.join(os.path.dirname(__file__), "died")
    if not os.path.exists(mark):
        open(mark, "w").close()
        os.kill(os.getpid(), signal.SIGSEGV)
"""
COMPILES = """
import os
import sys

import pytest


def inductors(names):
    inductor = os.path.dirname(sys.modules["torch._inductor"].__file__) + os.sep  # not the code it generates
    return sum((getattr(sys.modules[m], "__file__", None) or "").startswith(inductor) for m in names)


def test_compiles_with_inductor_cold():
    torch = pytest.importorskip("torch")
    import torch._inductor

    before = set(sys.modules)
    with torch._inductor.config.patch(force_disable_caches=True):
        forward = torch.compile(lambda x, w, b: torch.relu(torch.addmm(b, x, w)))
        y = forward(torch.ones(5, 4), torch.ones(4, 3), -torch.ones(3))
    assert torch.equal(y, torch.full((5, 3), 3.0))
    imported = inductors(set(sys.modules) - before)
    assert imported * 10 <= inductors(before) + imported, f"the first compile imported {imported} Inductor modules"
"""
USES = """
import os

def test_uses_a_temp_folder(tmp_path):
    open(os.path.join(os.path.dirname(__file__), "tmp"), "w").write(str(tmp_path))
"""


@pytest.fixture(scope="module")
def runner():
    runner = Runner(ROOT, timeout=60)
    runner.start()
    yield runner
    runner.close()


def folder(tmp_path: Path, name: str, **files: str) -> Path:
    made = tmp_path / name
    made.mkdir()
    for file, text in files.items():
        (made / f"{file}.py").write_text(text)
    return made


def args(folder: Path) -> list[str]:
    return [str(next(folder.glob("test_*.py"))), "-q", "-p", "no:cacheprovider", "-p", "no:stackcheck"]


def test_a_batch_runs_in_one_process_and_each_run_starts_clean(runner, tmp_path):
    first = folder(tmp_path, "first", test_leaves=LEAVES, left_behind="")
    second = folder(tmp_path, "second", test_finds=FINDS)
    results = runner.run_batch([(args(first), first), (args(second), second)])
    assert [r.ret for r in results] == [0, 0], "\n".join(results[1].outlines[-20:])
    assert (first / "pid").read_text() == (second / "pid").read_text() != str(os.getpid())


def test_a_run_past_its_limit_is_killed_and_the_batch_goes_on(runner, tmp_path):
    hangs = folder(tmp_path, "hangs", test_hangs=HANGS)
    after = folder(tmp_path, "after", test_runs=RUNS)
    results = runner.run_batch([(args(hangs), hangs), (args(after), after)], timeout=3)
    assert results[0].ret == -9 and "passed its time limit of 3 s" in results[0].outlines[-1]
    assert results[1].ret == 0, "\n".join(results[1].outlines[-20:])


def test_a_forked_run_killed_by_a_signal_is_run_again_in_a_fresh_interpreter(runner, tmp_path):
    """A library whose state does not survive a fork (MAX's threaded model load segfaulted once in a
    forked run) costs a fresh run, not a verdict: the run's result is the fresh one's."""
    dies = folder(tmp_path, "dies", test_dies=DIES_ONCE)
    after = folder(tmp_path, "after", test_runs=RUNS)
    died, ran = runner.run_batch([(args(dies), dies), (args(after), after)])
    assert died.ret == 0 and "the forked run died (exit code -11)" in died.outlines[0], died.outlines[-20:]
    assert ran.ret == 0, "\n".join(ran.outlines[-20:])


def test_a_forked_run_inherits_a_warm_inductor_and_compiles_cold_in_c(runner, tmp_path):
    """The server compiled once before forking, so a run's first compile imports almost none of the
    Inductor modules it needs (without that compile: 82 of 262); and a C++ compile with every cache
    off ends (a compile pool the server had used, whose threads a child lacks, would hang it)."""
    pytest.importorskip("torch")
    compiles = folder(tmp_path, "compiles", test_compiles=COMPILES)
    result = runner.run(args(compiles), compiles, timeout=30)
    assert result.ret == 0, "\n".join(result.outlines[-20:])


@pytest.mark.parametrize("error", [None, RuntimeError, KeyboardInterrupt])
def test_the_warm_up_leaves_the_temp_folder_as_it_found_it(error, tmp_path, monkeypatch):
    """The server's warm-up compiles in a cache folder of its own, gone after it whatever the compile
    did. Where torch.compile cannot run (a Python Dynamo refuses) it gives up quietly: its runs
    compile, or fail to, as a fresh interpreter's would; an interrupt still stops it."""
    torch = pytest.importorskip("torch")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))  # its own cache, meant to stay
    if error is not None:

        def refuse(function):
            def compiled(*args):
                raise error("Dynamo is not supported on this Python")

            return compiled

        monkeypatch.setattr(torch, "compile", refuse)
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            mutation._warm_once()
    else:
        mutation._warm_once()
    assert not list(temp.iterdir()), f"the warm-up left {sorted(p.name for p in temp.iterdir())}"


def test_a_run_leaves_nothing_in_the_temp_folder(tmp_path, monkeypatch):
    """A forked child leaves with os._exit, and no exit handler of its session runs: what one would
    remove or unlock (pytest's numbered temp folders) must not be left in the temp folder instead.
    The server gets a temp folder of its own, which must be as empty after a run as before (Inductor's
    cache, which by default lives there and is meant to stay, is put elsewhere)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    uses = folder(tmp_path, "uses", test_uses=USES)
    runner = Runner(ROOT, timeout=60)
    try:
        result = runner.run(args(uses), uses)
    finally:
        runner.close()
    assert result.ret == 0, "\n".join(result.outlines[-20:])
    assert not list(temp.iterdir())


def test_no_batch_holds_two_runs_of_one_claim():
    found = batches(table(ROOT / "tests_meta" / "mutants.toml"))
    assert all(len({m.claim for m in batch}) == len(batch) for batch in found)
    assert sorted(m.id for batch in found for m in batch) == sorted(
        m.id for m in table(ROOT / "tests_meta" / "mutants.toml")
    )
