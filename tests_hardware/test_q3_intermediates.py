"""Checkpoint 3 (after §7): the intermediates A and Z cost 4 x 16 MB = 64 MB of HBM round trips in
eager mode, and 0 MB when the epilogue is fused. Analytic from the course's shapes, measured with
the H200's DRAM counters, on any machine from XLA's cost analysis, and on the learner's own jitted
forward from the values its optimized HLO keeps in memory."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.homework.checkpoints import intermediate_traffic_mb
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params, tolerance_row
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import counters, ir, tiles

# §7's example: A, Z and Y are 16 MB each (2048 x 2048 float32)
COURSE_N = COURSE_M = 2048

# measured past any L2, with X and W inside it: sizes from the GPU (per_gpu.q3_outer, q3_inner)
N = M = per_gpu.q3_outer(device_profile.current())
K = per_gpu.q3_inner(device_profile.current())
EAGER, FUSED = (
    counters.request(w, metrics=counters.TRAFFIC, n=N, m=M, k=K) for w in ("eager_forward", "fused_forward")
)


@pytest.mark.claim("Q3")
def test_the_course_count_is_four_round_trips_of_a_16_mb_tensor():
    tensor_mb = COURSE_N * COURSE_M * 4 / 2**20
    assert tensor_mb == 16 and intermediate_traffic_mb(tensor_mb, fused=False) == 64
    assert intermediate_traffic_mb(tensor_mb, fused=True) == 0


@pytest.mark.claim("Q3")
@pytest.mark.cuda
@pytest.mark.triton
@pytest.mark.ncu(EAGER, FUSED)  # the fused tile runs in ncu's child; the numeric test below declares it
def test_eager_moves_a_and_z_through_dram_and_the_fused_kernel_does_not(evidence):
    eager, fused = counters.profile(EAGER), counters.profile(FUSED)
    evidence(
        **judges.assert_intermediates_removed(eager, fused, N, M, K),
        eager=[k.summary() for k in eager],
        fused=[k.summary() for k in fused],
    )


@pytest.mark.claim("Q3")
@pytest.mark.cuda
@pytest.mark.triton
@pytest.mark.gpu_tiles(tiles.FUSED)
def test_the_fused_kernel_that_skips_a_and_z_computes_the_forward():
    """The fused workload's numbers, which need no counters (a GPU that refuses ncu still shows them)."""
    from stackcheck.toolchains import workloads

    prepared = workloads.fused_forward(n=300, m=200, k=K)
    assert_matches_reference(
        prepared.step(),
        reference_forward(*map(as_numpy, prepared.inputs)),
        dtype="tfloat32",
        k=K,
        what="the fused kernel's Y",
    )


def xla_bytes(jax, fn, *args) -> float:
    """XLA's count of the bytes ``fn`` accesses (``ir.xla_extra_bytes`` over no compulsory bytes)."""
    return ir.xla_extra_bytes(jax.jit(fn).lower(*args).compile(), 0)


@pytest.mark.claim("Q3")
@pytest.mark.jax
def test_separately_compiled_ops_move_a_and_z_four_times(evidence):
    """The course's count from XLA's cost analysis on any machine: the three ops compiled one by one
    move 4 x N x M x 4 bytes beyond the compulsory (A and Z, each written once and read once)."""
    jax = need("jax")
    n, k, m = COURSE_N, 64, COURSE_M
    x, w, b = (jax.numpy.asarray(a) for a in make_inputs(n, k, m, seed=31))
    a = x @ w
    separate = (
        xla_bytes(jax, jax.numpy.matmul, x, w)
        + xla_bytes(jax, jax.numpy.add, a, b)
        + xla_bytes(jax, jax.nn.relu, a + b)
    )
    compulsory, course = counters.compulsory_bytes(n, m, k), 4 * n * m * 4
    evidence(separate_extra_bytes=separate - compulsory, course_4NM4=course)
    assert abs(separate - compulsory - course) <= 0.15 * course, (
        f"separate ops: {separate - compulsory:.0f} bytes beyond the compulsory, expected ~{course}"
    )
    assert_matches_reference(np.asarray(jax.nn.relu(a + b)), reference_forward(x, w, b), dtype="float32", k=k)


def course_line(x, w, b):
    """The course's line, as XLA compiles it on the backend at hand: what the learner's forward is held to."""
    jax = need("jax")
    return jax.nn.relu(x @ w + b)


@pytest.mark.claim("Q3")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_the_learners_one_program_keeps_no_intermediate_the_backend_fuses(impl, evidence, stack, device):
    """The learner's jitted forward, compiled for the device: the [N, M] values its optimized HLO
    writes and reads back, against XLA's compile of the course's line there. XLA:GPU fuses the bias
    and ReLU into the GEMM, so on a GPU the forward must keep neither A nor Z (the course's 0 MB);
    XLA:CPU keeps the dot's output A, so on a CPU it may keep A, never Z as well."""
    jax = need("jax")
    n, k, m = COURSE_N, 64, COURSE_M
    arrays = make_inputs(n, k, m, seed=31)
    x, w, b = jax_in(arrays, device, "float32")
    compulsory = counters.compulsory_bytes(n, m, k)

    def program(fn) -> dict:
        compiled = jax.jit(fn).lower(x, w, b).compile()
        return {
            "kept": ir.hlo_kept(compiled.as_text(), f"f32[{n},{m}]"),
            "extra_bytes": ir.xla_extra_bytes(compiled, compulsory),
        }

    found = judges.assert_keeps_no_more_than_the_backend(
        program(impl.jax_forward), program(course_line), 4 * n * m * 4, where=device
    )
    evidence(device=device, **found)
    y = jax_out(impl.jax_forward(x, w, b), "float32")
    assert_matches_reference(y, reference_forward(*arrays), dtype=tolerance_row(stack, device, "float32"), k=k)
