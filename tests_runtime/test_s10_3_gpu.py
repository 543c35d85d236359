"""§10.3: the example keeps CPU() as its device for the simplest observation; with a supported GPU
and MAX, choosing Accelerator() runs the same graph there. The graph, with the built-in ReLU and
the Mojo custom op study_relu (whose `target` parameter picks CPU or GPU code at compile time),
on the GPU gives what it gives on the CPU. Needs MAX and a GPU that MAX sees."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import (
    assert_matches_reference,
    assert_outputs_match,
    make_inputs,
    mismatch_report,
    reference_forward,
    round_to,
    tolerance,
)
from stackcheck.run import max_graphs
from stackcheck.stacks import available
from stackcheck.stacks.available import need
from stackcheck.stacks.params import tolerance_row

pytestmark = [pytest.mark.max, pytest.mark.mojo, pytest.mark.max_graph("structure-gpu")]


@pytest.mark.claim("S10.3-gpu")
@pytest.mark.cuda
def test_the_graph_on_accelerator_matches_the_cpu(impl, evidence):
    need("max")
    from max import driver

    if driver.accelerator_count() == 0:
        raise available.Missing("MAX sees no GPU (max.driver.accelerator_count() == 0)", "cuda")
    x, w, b = make_inputs(33, 65, 17, seed=103)  # sizes no vector width or block divides
    on_gpu = max_graphs.execute("structure-gpu", impl, x, w, b)
    on_cpu = max_graphs.execute("structure", impl, x, w, b)
    evidence(device=driver.accelerator_architecture_name(), outputs=sorted(on_gpu))
    row = tolerance_row("max", "cuda", "float32")  # TF32 on the GPU: see the precision test below
    assert_outputs_match(on_gpu, on_cpu, dtype=row, k=65, where="the MAX graph on Accelerator() vs CPU()")
    assert_outputs_match(
        on_gpu,
        {name: reference_forward(x, w, b) for name in on_cpu},
        dtype=row,
        k=65,
        where="the MAX graph on Accelerator()",
    )


@pytest.mark.claim("S10.3-gpu")
@pytest.mark.cuda
@pytest.mark.precision  # MAX's own GPU precision, which no setting changes
@pytest.mark.max_graph("math-gpu", "math")
@pytest.mark.gpu_needs("tf32")  # a GPU without TF32 tensor cores cannot show it
def test_max_multiplies_float32_in_tf32_on_the_gpu(impl, evidence):
    """§5.5: "실수의 수학적 등식과 부동소수점 연산의 비트 단위 결과는 완전히 같지 않다. 연산 재배치나 낮은
    정밀도 사용이 결과에 미칠 영향도 별도로 고려해야 한다." The same float32 graph on Accelerator()
    multiplies in TF32: its A = X @ W is the product of X and W rounded to 10 mantissa bits (within
    float32's tolerance of that), not float32's product (outside float32's tolerance of the exact
    one), and within the tfloat32 row. On CPU() it is float32's. MAX 26.7 has no setting for full
    float32 (its own minimax_music3 conv layer says so and splits operands to get the bits back)."""
    need("max")
    from max import driver

    if driver.accelerator_count() == 0:
        raise available.Missing("MAX sees no GPU (max.driver.accelerator_count() == 0)", "cuda")
    n, k, m = 128, 256, 128  # wide enough for MAX's tensor-core matmul (a 1 x K x 1 product stays float32)
    x, w, b = make_inputs(n, k, m, seed=105)
    on_gpu = max_graphs.execute("math-gpu", impl, x, w, b)["a"].astype(np.float64)
    on_cpu = max_graphs.execute("math", impl, x, w, b)["a"].astype(np.float64)
    exact = x.astype(np.float64) @ w.astype(np.float64)
    in_tf32 = round_to(x, "tfloat32").astype(np.float64) @ round_to(w, "tfloat32").astype(np.float64)
    evidence(
        shape=[n, k, m],
        gpu_vs_exact=float(np.abs(on_gpu - exact).max()),
        gpu_vs_tf32_product=float(np.abs(on_gpu - in_tf32).max()),
        tf32_product_vs_exact=float(np.abs(in_tf32 - exact).max()),
        cpu_vs_exact=float(np.abs(on_cpu - exact).max()),
    )
    assert_matches_reference(on_cpu, exact, dtype="float32", k=k, what="A = X @ W on CPU()")
    assert_matches_reference(
        on_gpu,
        in_tf32,
        dtype="float32",
        k=k,
        what="A = X @ W on Accelerator() vs the product of X and W rounded to TF32",
    )
    assert mismatch_report(on_gpu, exact, tolerance("float32", k)) is not None, (
        "A on Accelerator() met float32's tolerance: MAX multiplied in full float32 here, not TF32"
    )
    assert_matches_reference(on_gpu, exact, dtype="tfloat32", k=k, what="A = X @ W on Accelerator()")
