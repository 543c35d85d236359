"""A JAX forward that is not staged: each op dispatches on its own, as JAX's eager mode does."""

import jax


def jax_steps(x, w, b):
    a = x @ w
    z = a + b
    return a, z, jax.nn.relu(z)


def jax_forward(x, w, b):
    return jax_steps(x, w, b)[2]
