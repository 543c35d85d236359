"""§6.1: "버퍼 : 초기-중간-최종 결과를 담을 데이터 저장공간 (재사용도 가능)". The implementation's forward,
jitted with X donated (X and Y both [N, M]), writes Y into X's buffer: the same address, and X is
consumed. Without donation Y gets a buffer of its own and X stays."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out

N, K = 16, 8  # M = K: Y has X's shape and dtype, so X's buffer can hold it


def addresses(jax, forward, donate: bool, inputs, device: str):
    x, w, b = jax_in(inputs, device, "float32")
    x = jax.numpy.copy(x)  # a buffer XLA owns: one that wraps NumPy's memory is copied, not donated
    before = x.unsafe_buffer_pointer()
    y = jax.jit(forward, donate_argnums=(0,) if donate else ())(x, w, b)
    return before, y.unsafe_buffer_pointer(), x.is_deleted(), y


@pytest.mark.claim("S6.1-donate")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu", "cuda")))
def test_a_donated_input_buffer_holds_the_output(impl, evidence, stack, device):
    jax = need("jax")
    inputs = make_inputs(N, K, K, seed=61)
    *donated, y = addresses(jax, impl.jax_forward, True, inputs, device)
    *kept, _ = addresses(jax, impl.jax_forward, False, inputs, device)
    evidence(device=device, donated=donated, kept=kept)
    judges.assert_donated_buffer_reused(tuple(donated), tuple(kept))
    assert_matches_reference(
        jax_out(y, "float32"), reference_forward(*inputs), dtype="float32", k=K, stack=stack, device=device
    )
