"""MAX graphs compile at once across xdist workers (issue 36, item 2): each worker starts its share
when the session starts, and a compile waits only for another process compiling the same graph."""

import threading

import pytest

from stackcheck.run import max_graphs

pytestmark = pytest.mark.meta

KINDS = {"math", "structure", "special", "math-gpu", "structure-gpu", "special-gpu"}


def test_the_workers_share_the_graphs_out_between_them():
    shares = [max_graphs.share(KINDS, f"gw{i}", 4) for i in range(4)]
    assert sorted(k for share in shares for k in share) == sorted(KINDS)
    assert all(shares), shares
    assert max_graphs.share(KINDS, "gw0", 1) == sorted(KINDS)  # one process: all of them


def waited(what: str, held: str, tmp_path, monkeypatch) -> bool:
    """Whether taking the compile lock of ``what`` waits while another holder has ``held``'s."""
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path))
    taken = threading.Event()

    def take():
        with max_graphs._compile_lock(what):
            taken.set()

    with max_graphs._compile_lock(held):  # flock: a lock file opened twice conflicts, in one process too
        thread = threading.Thread(target=take)
        thread.start()
        blocked = not taken.wait(1.0)
    thread.join()
    return blocked


def test_another_graph_compiles_at_once(tmp_path, monkeypatch):
    assert not waited("structure-gpu|ref|True", "math-gpu|ref|True", tmp_path, monkeypatch)


def test_the_same_graph_waits_for_the_compile_in_progress(tmp_path, monkeypatch):
    assert waited("math-gpu|ref|True", "math-gpu|ref|True", tmp_path, monkeypatch)


def test_a_collect_only_run_builds_no_graph(pytester, suite_file, monkeypatch):
    """``--collect-only`` runs no test: it starts no MAX compile (a graph's build alone is a second)."""
    pytest.importorskip("max.graph")
    built: dict = {}
    monkeypatch.setattr(max_graphs, "_MODELS", built)
    reprec = pytester.inline_run(suite_file("tests_math/test_s2_2_hand.py"), "-m", "max", "--collect-only")
    assert reprec.getcalls("pytest_collection_finish") and reprec.ret == 0
    assert not built, f"--collect-only built {sorted(k[0] for k in built)}"
