"""§4.3: each stack's IR holds the computation's ops, matmul -> (broadcast) -> add -> relu."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir

MATH = ["matmul", "add", "relu"]


@pytest.mark.claim("S4.3-ir")
@pytest.mark.parametrize("device", device_params("torch"))
def test_torch_export_aten_graph(impl, torch_inputs, example_inputs):
    text = ir.torch_export_graph(impl.torch_forward, *torch_inputs)
    assert "aten." in text, "torch.export's graph is made of ATen ops"
    core = ir.core_aten(impl.torch_forward, *torch_inputs)
    judges.assert_torch_math_ops(core, torch_inputs, MATH, "torch.export ATen graph")
    y = impl.torch_forward(*torch_inputs)
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S4.3-ir")
@pytest.mark.parametrize("device", device_params("torch"))
def test_dynamo_fx_graph_from_a_recording_backend(impl, torch_inputs, example_inputs):
    graphs, y = ir.dynamo_graphs(impl.torch_forward, *torch_inputs)
    assert len(graphs) == 1, f"the course's forward is one graph, got {len(graphs)}"
    inputs = graphs[0].meta["example_inputs"]
    judges.assert_torch_math_ops(ir.core_aten(graphs[0], *inputs), inputs, MATH, "Dynamo FX graph")
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S4.3-ir")
@pytest.mark.parametrize("device", device_params("jax"))
@pytest.mark.parametrize("stage", ["jaxpr", "stablehlo"])
def test_jaxpr_and_stablehlo(impl, jax_inputs, example_inputs, stage):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    judges.assert_ops_in_order(stages[stage], ["matmul", "broadcast", "add", "relu"], f"JAX {stage}", form=stage)
    y = stages["compiled"](*jax_inputs)
    assert_matches_reference(np.asarray(y), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S4.3-ir")
@pytest.mark.max_graph("structure")
@pytest.mark.max
def test_max_graph_text(impl, example_inputs):
    graph, _, _ = max_graphs.model("structure", impl)
    text = str(graph)
    judges.assert_ops_in_order(text, MATH, "MAX graph")
    assert text.lstrip().startswith("mo.graph"), "MAX's graph is MLIR in the mo dialect"
    out = max_graphs.execute("structure", impl, *example_inputs)
    assert_matches_reference(out["y"], reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.meta
def test_matcher_normalizes_names_and_rejects_a_missing_op():
    assert ir.op_sequence("%0 = stablehlo.dot_general\n%1 = stablehlo.add\n%2 = stablehlo.maximum") == MATH
    assert ir.op_sequence("%1 = rmo.matmul(%a)\n%2 = rmo.add(%1)\n%3 = rmo.mo.relu(%2)") == MATH
    assert ir.op_sequence("extern_kernels.addmm(...)") == ["matmul", "add"], "addmm is a matmul and its bias add"


@pytest.mark.meta
@pytest.mark.parametrize(
    "spelling, families",
    [
        ("addmm = torch.ops.aten.addmm.default(b, x, w)\nrelu = torch.ops.aten.relu.default(addmm)", MATH),
        ("linear = torch._C._nn.linear(x, t, b)\nrelu = torch.relu(linear)", MATH),
        ("mm = aten.mm.default(x, w)\nadd = aten.add.Tensor(mm, b)\nclamp_min = aten.clamp_min.default(add, 0)", MATH),
        (
            "%matmul = call_function[target=torch.matmul](args = (%x, %w))\n%add = ...add](args = (%matmul, %b))\n"
            "%clamp = call_function[target=torch.clamp](args = (%add,), kwargs = {min: 0})",
            MATH,
        ),
        ("z = aten.add.Tensor(mm, b)\ny = aten.threshold.default(z, 0, 0)", ["add", "relu"]),
        ("%2 = stablehlo.maximum %1, %0", ["relu"]),
    ],
    ids=["addmm", "linear", "clamp_min-of-add", "clamp", "threshold", "stablehlo-maximum"],
)
def test_one_classifier_reads_every_spelling_of_the_course_ops(spelling, families):
    """§4.3's ops are families, whatever the spelling: a fused addmm or linear holds the matmul and
    the bias add, and clamp_min(z, 0) is the ReLU even when its input is named add."""
    assert ir.op_sequence(spelling) == families
    with pytest.raises(AssertionError, match="expected the ops matmul -> add -> relu"):
        judges.assert_ops_in_order("d = dot_general a b\ng = max d 0.0", MATH, "a graph without the bias")


@pytest.mark.meta
def test_torch_ops_are_judged_on_core_aten_by_what_they_compute():
    """Issue 51: the torch judge reads the canonical form, not names: einsum is a matmul there (bmm), an add
    that broadcasts b is the bias add, and where/maximum/clamp are a ReLU exactly when they compute max(z, 0)
    on the probes; a where that drops NaN, a leaky ReLU, abs and a row-by-row add are not."""
    torch = need("torch")
    x, w, b = (torch.from_numpy(v) for v in make_inputs(6, 4, 3, seed=5))
    spelled = {
        "einsum-where": lambda x, w, b: torch.where((z := torch.einsum("nk,km->nm", x, w) + b) < 0, 0.0, z),
        "tensordot-maximum": lambda x, w, b: torch.maximum(torch.tensordot(x, w, dims=1) + b, torch.tensor(0.0)),
        "addmm-clamp": lambda x, w, b: torch.clamp(torch.addmm(b, x, w), min=0),
        "nan-dropping": lambda x, w, b: torch.where((z := x @ w + b) > 0, z, 0.0),
        "leaky": lambda x, w, b: torch.nn.functional.leaky_relu(x @ w + b, 0.01),
        "abs": lambda x, w, b: (x @ w + b).abs(),
        "row-by-row": lambda x, w, b: torch.stack([row + b for row in (x @ w).unbind(0)]).relu(),
    }
    found = {name: ir.torch_math_ops(ir.core_aten(fn, x, w, b), x, w, b) for name, fn in spelled.items()}
    assert found == {
        "einsum-where": MATH,
        "tensordot-maximum": MATH,
        "addmm-clamp": MATH,
        "nan-dropping": ["matmul", "add"],
        "leaky": ["matmul", "add"],
        "abs": ["matmul", "add"],
        "row-by-row": ["matmul", "relu"],
    }, found
