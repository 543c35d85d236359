"""Checkpoint 3 (after §7): the intermediates A and Z cost 4 x 16 MB = 64 MB of HBM round trips in
eager mode, and 0 MB when the epilogue is fused. Analytic from the course's shapes, measured with
the H200's DRAM counters, and on any machine from XLA's cost analysis."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.homework.checkpoints import intermediate_traffic_mb
from stackcheck.stacks.available import need
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
    cost = jax.jit(fn).lower(*args).compile().cost_analysis()
    return (cost[0] if isinstance(cost, list) else cost)["bytes accessed"]


def materialized(jax, fn, *args, shape: str) -> list[str]:
    """The ENTRY values of ``fn``'s optimized HLO of ``shape`` that are not its result: tensors the
    program writes to memory and reads back. XLA's bytes count misses custom calls, this does not."""
    hlo = jax.jit(fn).lower(*args).compile().as_text()
    return [
        line.split(" = ")[0]
        for line in ir.hlo_entry(hlo)
        if not line.startswith("ROOT") and f" = {shape}" in line and "parameter(" not in line
    ]


@pytest.mark.claim("Q3")
@pytest.mark.jax
def test_xla_counts_the_intermediate_round_trips_that_one_program_saves(impl, evidence):
    """Separately compiled ops move A and Z through memory (4 x N x M x 4 bytes beyond the compulsory);
    the implementation's one jitted forward saves at least Z's round trip. XLA:CPU keeps the dot's
    output A (it fuses the add and ReLU, not the dot's epilogue); a GPU backend may fuse that too."""
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
    kept = materialized(jax, impl.jax_forward, x, w, b, shape=f"f32[{n},{m}]")
    fused = max(xla_bytes(jax, impl.jax_forward, x, w, b) - compulsory, len(kept) * 2 * n * m * 4)
    evidence(
        separate_extra_bytes=separate - compulsory, fused_extra_bytes=fused, kept_in_memory=kept, course_4NM4=course
    )
    assert abs(separate - compulsory - course) <= 0.15 * course, (
        f"separate ops: {separate - compulsory:.0f} bytes beyond the compulsory, expected ~{course}"
    )
    assert fused <= 0.5 * course * 1.05, (
        f"one program still moves {fused:.0f} bytes of intermediates (A and Z: {course}); kept in memory: {kept}"
    )
    assert_matches_reference(np.asarray(impl.jax_forward(x, w, b)), reference_forward(x, w, b), dtype="float32", k=k)
