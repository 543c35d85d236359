"""Two MAX compiles that load one Mojo package never run at once (course §10.3, §10.4): each graph of
the suite's and each op of MAX's torch bridge is built and compiled holding that package's lock, across
processes (xdist workers). Here the compiler is a fake that asks, from another thread, whether the lock
is free while it "compiles"."""

import threading
import types

import pytest

from stackcheck.impl import reference
from stackcheck.impl.loader import Impl
from stackcheck.run import custom_ops, max_graphs
from stackcheck.stacks.available import need
from stackcheck.toolchains import mojo_build

pytestmark = pytest.mark.meta


def free(package) -> bool:
    """Whether another taker would get ``package``'s lock now."""
    got, raised = threading.Event(), []

    def take():
        try:
            with max_graphs.package_lock(package):
                got.set()
        except BaseException as error:  # a lock that cannot be taken is no answer
            raised.append(error)
            got.set()

    threading.Thread(target=take, daemon=True).start()
    answer = got.wait(0.5)
    if raised:
        raise raised[0]
    return answer


@pytest.fixture
def package(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    return mojo_build.stable_package(Impl(reference).mojo_package())


@pytest.fixture
def bridge(monkeypatch, package):
    """MAX's torch bridge, faked: every library built and every op call records whether the lock was free."""
    seen = []

    class Op:
        def __call__(self, out, z):
            seen.append(("call", free(package)))
            out.copy_(z.detach().clamp_min(0))  # as the bridge: no autograd rule

    class Library:
        def __init__(self, path):
            seen.append(("library", free(path)))
            self.study_relu = Op()

    fake = types.SimpleNamespace(CustomOpLibrary=Library, graph_op=lambda fn, name: Op())
    monkeypatch.setattr(custom_ops, "_bridge", lambda: fake)
    return seen


def test_the_bridges_library_and_first_call_hold_the_package(package, bridge):
    need("torch")
    custom_ops.no_gradient(package, (4, 3), 1)
    assert bridge[:2] == [("library", False), ("call", False)], bridge


def test_each_shapes_first_calls_hold_the_package(package, bridge):
    need("torch")
    need("max")
    custom_ops.against_builtin(package, "cpu", {"tiny": ((4, 3), 1)}, trials=1)
    assert bridge[:3] == [("library", False), ("call", False), ("call", False)], bridge


def test_a_graph_that_loads_the_package_compiles_holding_it(package, monkeypatch):
    monkeypatch.setattr(max_graphs, "with_mojo", lambda: True)
    seen = []

    class Session:
        def load(self, graph):
            seen.append(free(package))
            return "compiled"

    assert max_graphs._load(Session(), None, "structure", Impl(reference)) == "compiled"
    assert seen == [False]
    monkeypatch.setattr(max_graphs, "with_mojo", lambda: False)
    assert max_graphs._load(Session(), None, "structure", Impl(reference)) == "compiled" and seen == [False, True]


def test_the_lock_is_given_back(package):
    with max_graphs.package_lock(package, package):
        assert not free(package)
    assert free(package) and free(str(package))  # one lock per path, however it is given
