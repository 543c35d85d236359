"""§10.4 and experiment F: the Mojo custom op "study_relu" joins a MAX graph by its registered name,
equals the built-in relu and NumPy, and stays its own kernel: the custom boundary keeps ReLU out of
the matmul epilogue that the built-in relu gets."""

import re

import pytest

from stackcheck.evidence.numerics import assert_exact, assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.params import device_params, tolerance_row
from stackcheck.toolchains import ir, mojo_build

pytestmark = [pytest.mark.mojo, pytest.mark.max, pytest.mark.max_graph("structure")]


@pytest.mark.claim("S10.4-custom")
@pytest.mark.parametrize("device", device_params("mojo"))
@pytest.mark.parametrize("shape", [(2, 3, 2), (33, 17, 65), (1, 1, 1), (64, 128, 7)])
def test_custom_relu_equals_builtin_and_numpy(impl, device, shape):
    """On the GPU the custom op runs as GPU code: its `target` parameter picks it at compile time."""
    x, w, b = make_inputs(*shape, seed=sum(shape))
    out = max_graphs.execute(max_graphs.on_device("structure", device), impl, x, w, b)
    assert_exact(
        out["y_mojo"], out["y"], what="Y with the custom ReLU vs MAX's built-in relu", shape=shape, device=device
    )
    assert_matches_reference(
        out["y_mojo"],
        reference_forward(x, w, b),
        dtype=tolerance_row("mojo", device, "float32"),
        k=shape[1],
        what=f"Y with the Mojo custom ReLU on {device}",
    )


@pytest.mark.claim("S10.4-custom")
def test_custom_op_is_its_own_kernel(impl):
    _, compiled, _ = max_graphs.model("structure", impl)
    summaries = compiled.kernel_summaries
    fused_relu = [s for s in summaries if re.search(r"Epilogue\(mo\.matmul\b.*\bmo\.add\b.*\bmo\.relu\b", s)]
    add_only = [s for s in summaries if re.search(r"Epilogue\(mo\.matmul\b.*\bmo\.add\)", s)]
    custom = [s for s in summaries if re.search(r"\bcustom__study_relu\b", s)]
    assert len(fused_relu) == 1, f"built-in chain: relu inside the matmul epilogue: {summaries}"
    assert len(add_only) == 1 and len(custom) == 1, (
        f"custom chain: the epilogue stops at add, and study_relu runs as a kernel of its own: {summaries}"
    )


@pytest.mark.claim("S10.4-custom")
def test_the_registered_name_ties_python_to_mojo(impl):
    from max.driver import CPU
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, ops

    ref = DeviceRef.from_device(CPU())
    out_type = TensorType(DType.float32, [2, 2], device=ref)
    package = mojo_build.stable_package(impl.mojo_package())
    with pytest.raises(Exception, match=r"study_rleu"):
        with Graph("misspelled", input_types=[out_type], custom_extensions=[package]) as graph:
            graph.output(ops.custom("study_rleu", device=ref, values=[graph.inputs[0].tensor], out_types=[out_type])[0])
    calls = ir.max_custom_ops(max_graphs.built("structure", impl))
    assert calls == ["study_relu"], f"the graph MAX built calls the custom op by its registered name: {calls}"
