"""§9.5: the gradient goes through the same stack as the forward: jax.value_and_grad is traced,
lowered and compiled, and its optimized HLO holds matmuls (dX, dW), elementwise ops (the ReLU
mask) and reductions (the mean, db)."""

import collections

import numpy as np
import pytest

from stackcheck.evidence.gradients import closed_form
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in
from stackcheck.toolchains import ir

N, K, M = 16, 8, 4


@pytest.mark.claim("S9.5-grad-ir")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_the_gradient_is_a_compiled_program_of_matmuls_elementwise_ops_and_reductions(impl, stack, device):
    need("jax")
    x, w, b = make_inputs(N, K, M, seed=41)
    stages = ir.jax_stages(impl.jax_loss_and_grads, *jax_in((x, w, b), device, "float32"))
    ops = collections.Counter(ir.hlo_opcodes(stages["hlo"]))
    matmuls = ops["dot"] + ops["custom-call"]
    elementwise = sum(ops[o] for o in ("multiply", "select", "compare", "maximum", "add"))
    assert matmuls >= 3 and elementwise and ops["reduce"] >= 1, (
        f"forward matmul, dX = dZ Wᵀ and dW = Xᵀ dZ, the ReLU mask, the mean and db, all compiled: {dict(ops)}"
    )
    loss, grads = stages["compiled"](*jax_in((x, w, b), device, "float32"))
    exact = closed_form(x, w, b)
    assert_matches_reference(
        np.asarray(loss), np.asarray(exact["loss"]), dtype="float32", k=K, what="loss", stack=stack, device=device
    )
    for name, got in zip(("dX", "dW", "db"), grads):
        assert_matches_reference(
            np.asarray(got), exact[name], dtype="float32", k=max(N, M), what=name, stack=stack, device=device
        )
