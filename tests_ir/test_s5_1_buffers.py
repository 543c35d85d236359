"""§5.1, buffer planning: "어떤 메모리를 언제 재사용할까? | 중간값의 생존 기간 분석". A chain of the
course's line, Y = ReLU(X @ W + b) six times, cannot fuse into one kernel (a matmul reads all of the
previous Y), so each step's Y is an intermediate in memory; each is dead once the next is made, and
XLA's plan reuses their buffers: its scratch memory is a fraction of their sum."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out

N, M, STEPS = 64, 48, 6


def chain(jax, x, w, b):
    for _ in range(STEPS):
        x = jax.nn.relu(x @ w + b)
    return x


@pytest.mark.claim("S5.1-buffers")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_intermediates_share_buffers_by_their_lifetimes(evidence, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(N, M, M, seed=151)
    w = w / M  # keeps six steps of Y near the inputs' scale
    args = jax_in((x, w, b), device, "float32")
    compiled = jax.jit(lambda *a: chain(jax, *a)).lower(*args).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    evidence(device=device, **judges.assert_buffers_reused(temp, STEPS - 1, N * M * 4))
    want = x.astype("float64")
    for _ in range(STEPS):
        want = (want @ w.astype("float64") + b).clip(min=0)
    assert_matches_reference(
        jax_out(compiled(*args), "float32"), want, dtype="float32", k=M * STEPS, stack=stack, device=device
    )
