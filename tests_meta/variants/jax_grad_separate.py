"""The loss and jax.grad of it computed side by side, both inside one jit."""

import jax
import jax.numpy as jnp

from stackcheck.impl.reference import check_operands


def _loss(x, w, b):
    return (jnp.maximum(jnp.matmul(x, w) + b, 0.0) ** 2).mean()


@jax.jit
def _loss_and_grads(x, w, b):
    return _loss(x, w, b), jax.grad(_loss, argnums=(0, 1, 2))(x, w, b)


def jax_loss_and_grads(x, w, b):
    check_operands(x, w, b)
    return _loss_and_grads(x, w, b)
