"""JAX with module-level @jax.jit functions, jnp.dot and jnp.maximum."""

import jax
import jax.numpy as jnp

from stackcheck.impl.reference import check_operands


@jax.jit
def _steps(x, w, b):
    a = jnp.dot(x, w)
    z = a + b
    return a, z, jnp.maximum(z, 0)


@jax.jit
def _forward(x, w, b):
    return jnp.maximum(jnp.dot(x, w) + b, 0)


def jax_steps(x, w, b):
    check_operands(x, w, b)
    return _steps(x, w, b)


def jax_forward(x, w, b):
    check_operands(x, w, b)
    return _forward(x, w, b)
