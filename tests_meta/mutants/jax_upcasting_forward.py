"""A JAX forward that computes in float32 whatever it is given ('for accuracy'): bfloat16 inputs come
back as float32, twice the memory the shapes and dtypes call for, and Y no longer fits X's buffer."""

import jax
import jax.numpy as jnp


def jax_forward(x, w, b):
    x, w, b = (jnp.asarray(v, jnp.float32) for v in (x, w, b))
    return jax.nn.relu(x @ w + b)
