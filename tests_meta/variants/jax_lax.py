"""JAX through lax: dot_general for the product, lax.max for the ReLU, one jit each."""

import jax
from jax import lax

from stackcheck.impl.reference import check_operands


def _steps(x, w, b):
    a = lax.dot_general(x, w, (((1,), (0,)), ((), ())))
    z = lax.add(a, lax.broadcast_in_dim(b, a.shape, (1,)))
    return a, z, lax.max(z, lax.full_like(z, 0))


def jax_steps(x, w, b):
    check_operands(x, w, b)
    return jax.jit(_steps)(x, w, b)


def _forward(x, w, b):
    return _steps(x, w, b)[2]


def jax_forward(x, w, b):
    check_operands(x, w, b)
    return jax.jit(_forward)(x, w, b)
