"""A hand-written JAX gradient that forgets ReLU's mask: dZ = 2Y/(N·M) everywhere, also where Z <= 0."""

import jax.numpy as jnp


def jax_loss_and_grads(x, w, b):
    z = x @ w + b
    y = jnp.maximum(z, 0)
    n, m = y.shape
    dz = 2 * z / (n * m)  # should be 2 * y / (n * m), i.e. masked by z > 0
    return jnp.mean(y**2), (dz @ w.T, x.T @ dz, dz.sum(axis=0))
