"""§10.4: study_relu's ``target`` is a compile-time parameter, and ``foreach`` spreads the
elementwise body over whatever device the graph is compiled for. The suite's structure graph
(built-in ReLU, and the Mojo custom op) compiled for an H100/H200 (sm_90) on any machine, in MAX's
compile-only virtual device mode: its SASS shows the built-in ReLU fused into the matmul kernel and
the custom op as a foreach kernel of its own that takes the max. The same graph on the CPU gives Y."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_outputs_match, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.toolchains import ir

ARCH = "sm_90"
pytestmark = [pytest.mark.max, pytest.mark.mojo, pytest.mark.triton, pytest.mark.max_graph("structure", ARCH)]


@pytest.mark.claim("S10.4-gpu-target")
@pytest.mark.judge_traces("MAX's compile for a GPU runs in a fresh interpreter that builds the implementation's graph")
def test_the_custom_op_compiles_to_its_own_gpu_kernel(impl, evidence):
    kernels = ir.sass_kernels(ir.cuda_objects(max_graphs.compiled_for_gpu(impl, ARCH)))
    evidence(**judges.assert_custom_op_own_gpu_kernel(kernels, ARCH))
    x, w, b = make_inputs(33, 65, 17, seed=105)
    on_cpu = max_graphs.execute("structure", impl, x, w, b)
    assert_outputs_match(
        on_cpu,
        {"y": reference_forward(x, w, b), "y_mojo": reference_forward(x, w, b)},
        dtype="float32",
        k=65,
        where="the structure graph on CPU()",
    )
