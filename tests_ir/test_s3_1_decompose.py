"""§3.1: a model is a composition of operations. Attention, an MLP (the course's ReLU(XW + b), the
implementation's) and a norm, traced by JAX, are matmuls, reductions, exp, division and adds."""

import collections
import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out

T, D = 6, 8  # tokens, features


def block(jnp, mlp, x, wq, wk, wv, w1, b1):
    """One pre-norm Transformer block, written out: norm, attention, residual, MLP, residual."""
    h = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(
        ((x - x.mean(-1, keepdims=True)) ** 2).mean(-1, keepdims=True) + 1e-5
    )
    scores = (h @ wq) @ (h @ wk).T / np.sqrt(D)
    p = jnp.exp(scores - scores.max(-1, keepdims=True))
    x = x + (p / p.sum(-1, keepdims=True)) @ (h @ wv)
    return x + mlp(x, w1, b1) @ w1.T


@pytest.mark.claim("S3.1-decompose")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_transformer_block_is_matmuls_reductions_exp_div_and_adds(impl, stack, device):
    jax = need("jax")
    x, wq, wk, wv, w1 = (uniform(s, seed=90 + i) for i, s in enumerate([(T, D), (D, D), (D, D), (D, D), (D, 2 * D)]))
    b1 = uniform((2 * D,), seed=95)
    args = jax_in((x, wq, wk, wv, w1, b1), device, "float32")
    jaxpr = str(jax.make_jaxpr(lambda *a: block(jax.numpy, impl.jax_forward, *a))(*args))
    ops = collections.Counter(re.findall(r"= (dot_general|reduce_sum|reduce_max|exp|div|add|sub|max|sqrt)\b", jaxpr))
    assert (
        ops["dot_general"] >= 7
        and ops["reduce_sum"] + ops["reduce_max"] >= 3
        and ops["exp"] >= 1
        and ops["div"] >= 2
        and ops["add"] >= 3
        and ops["max"] >= 1
    ), f"attention, norm and MLP must show as matmuls, reductions, exp, division, adds and the ReLU's max: {dict(ops)}"
    y = jax.jit(lambda *a: block(jax.numpy, impl.jax_forward, *a))(*args)
    reference = block(
        np, lambda a, w, b: np.maximum(a @ w + b, 0), *(v.astype(np.float64) for v in (x, wq, wk, wv, w1, b1))
    )
    assert_matches_reference(
        jax_out(y, "float32"),
        reference,
        dtype="float32",
        k=4 * D,
        stack=stack,
        device=device,
        what="the block's output",
    )
