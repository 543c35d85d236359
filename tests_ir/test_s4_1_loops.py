"""§4.1: "Python 프로그램에는 텐서 연산뿐 아니라 반복문, 조건문, ... 여러 동작이 섞일 수 있다." A Python
loop is not part of the traced program: under jax.jit a loop of 3 calls of the implementation's forward
unrolls into 3 copies of its matmul, while lax.fori_loop keeps one loop primitive (a scan for static
bounds, else a while) holding one copy. Both compute the same Y."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir

STEPS, N, K = 3, 6, 4  # W is [K, K]: Y can be fed back as X


@pytest.mark.claim("S4.1-loops")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_python_loop_unrolls_and_fori_loop_stays_a_loop(impl, evidence, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(N, K, K, seed=41)
    args = jax_in((x, w, b), device, "float32")

    def python_loop(p, q, r):
        for _ in range(STEPS):
            p = impl.jax_forward(p, q, r)
        return p

    def fori(p, q, r):
        return jax.lax.fori_loop(0, STEPS, lambda i, v: impl.jax_forward(v, q, r), p)

    jaxprs = [ir.jaxpr_ops(jax.make_jaxpr(f)(*args)) for f in (impl.jax_forward, python_loop, fori)]
    evidence(device=device, **judges.assert_unrolled_and_looped(*jaxprs, STEPS))
    expected = x.astype(np.float64)
    for _ in range(STEPS):
        expected = reference_forward(expected, w, b)
    for f in (python_loop, fori):
        y = ir.jax_stages(f, *args)["compiled"](*args)
        assert_matches_reference(
            jax_out(y, "float32"), expected, dtype="float32", k=STEPS * K, stack=stack, device=device
        )
