"""A graded submission's torch forward reaches S2.3-broadcast's eager-ops test as a core ATen graph
the worker exported and the judge runs itself (stackcheck.impl.aten_graph, issue 50 item 2): every
spelling survives the trip, the judge refuses what is not a core ATen graph, and a graded run reads
the ops from the judge's own eager mode, not from the worker's recording."""

import itertools
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.claims.spellings import importable, spellings
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.impl import aten_graph
from stackcheck.impl.loader import load_module
from stackcheck.toolchains import ir

pytestmark = pytest.mark.meta
torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parent.parent
COUNTER = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    with importable(tmp_path_factory.mktemp("exported")) as path:
        yield path


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(spelling=st.one_of(spellings("torch"), spellings("torch", "relu"), spellings("torch", "bias")))
def test_every_torch_spelling_computes_the_same_in_the_judges_graph(spelling, folder):
    """Any spelling of the forward, right or wrong: the rebuilt graph returns what the function returns
    (so the judge reads the program that ran), on the course's inputs with negatives and zeros; and the
    claim tests' own core ATen (``ir.core_aten``, traced without export) has the same op families."""
    module = load_module(str(spelling.write(folder, f"exported_{next(COUNTER)}")))
    x, w, b = (torch.from_numpy(v) for v in make_inputs(64, 7, 5, seed=3))
    graph = aten_graph.rebuild(aten_graph.dump(module.torch_forward, x, w, b), x.device)
    assert_matches_reference(
        graph(x, w, b).numpy(), module.torch_forward(x, w, b).numpy(), dtype="float32", k=7, stack="torch"
    )
    traced = ir.core_aten(module.torch_forward, x, w, b)
    assert ir.torch_math_ops(traced, x, w, b) == ir.torch_math_ops(graph, x, w, b), f"{spelling}:\n{traced.graph}"


def graph_of(*nodes, inputs=(["user", 0],), output=("node", 1)):
    return {"inputs": list(inputs), "nodes": [list(n) for n in nodes], "output": list(output)}


REFUSED = {
    "a non-core op that reads a file": graph_of(["aten.from_file.default", ["list", [["value", "/etc/passwd"]]], {}]),
    "an attribute that is no op": graph_of(["aten.__class__.__init__", ["list", [["node", 0]]], {}]),
    "an op of another namespace": graph_of(["prims.device_put.default", ["list", [["node", 0]]], {}]),
    "a node read before it exists": graph_of(["aten.relu.default", ["list", [["node", 7]]], {}]),
    "a string argument": graph_of(["aten.relu.default", ["list", [["value", "x"]]], {}]),
    "a device of another kind": graph_of(
        ["aten.scalar_tensor.default", ["list", [["value", 0.0]]], {"device": ["device", "meta"]}]
    ),
    "an input that is no array": graph_of(
        ["aten.add.Tensor", ["list", [["node", 0], ["node", 1]]], {}], inputs=[["user", 0], ["constant", [1.0]]]
    ),
    "not a graph": ["aten.relu.default"],
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_the_judge_refuses_what_is_not_a_core_aten_graph(what):
    with pytest.raises(aten_graph.GraphRefused):
        aten_graph.rebuild(REFUSED[what], torch.device("cpu"))


def test_a_forged_graph_that_computes_otherwise_is_not_read(folder):
    """The judge keeps a graph only where it returns what the function returns (Worker._exported_graph):
    a graph with the ReLU left out, offered for a correct forward, computes otherwise on the probe."""
    x, w, b = (torch.from_numpy(v) for v in make_inputs(64, 7, 5, seed=3))
    forged = aten_graph.rebuild(aten_graph.dump(lambda x, w, b: x @ w + b, x, w, b), x.device)
    with pytest.raises(AssertionError):
        assert_matches_reference(
            forged(x, w, b).numpy(), torch.relu(x @ w + b).numpy(), dtype="float32", k=7, stack="torch"
        )


COPYING = "    return torch.relu(x @ w + b.expand(x.shape[0], -1).contiguous())\n"
HONEST = "    return torch.relu(torch.addmm(b, x, w))\n"


@pytest.mark.parametrize("body, outcome", [(HONEST, "passed"), (COPYING, "failed")], ids=["addmm", "copy"])
def test_a_graded_forward_is_judged_on_the_judges_own_run_of_its_graph(tmp_path, body, outcome, graded_command):
    """Graded (issue 50): S2.3-broadcast's eager test reads the ops the judge's eager mode ran on the
    exported graph (no "measured by the submission's worker" in its evidence); an N-fold copy of b
    made by ``expand(...).contiguous()`` fails it, an addmm passes it. A fresh judge process, as `stackcheck
    grade` starts it."""
    from stackcheck.homework import assignment

    homework = tmp_path / "hw"
    homework.mkdir()
    stub = assignment.stub_source(["math"])
    head, _, tail = stub.partition("def torch_forward(")
    signature, _, rest = tail.partition('    raise NotImplementedError("§8.1: write torch_forward")\n')
    (homework / "homework.py").write_text(head + "def torch_forward(" + signature + "    import torch\n" + body + rest)
    report = tmp_path / "report.json"
    command = [*graded_command(homework), f"--curriculum-report={report}", "-m", "cpu"]
    command += ["tests_math/test_s2_3_broadcast.py::test_torch_eager_adds_b_without_an_n_fold_copy"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    tests = [t for claim in json.loads(report.read_text())["claims"] for t in claim.get("tests", [])]
    judged = [t for t in tests if "eager_adds_b" in t["nodeid"]]
    assert [t["outcome"] for t in judged] == [outcome], done.stdout[-3000:]
    assert not any("measured by the submission's worker" in e for t in judged for e in t.get("evidence", [])), judged
