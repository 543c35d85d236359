"""A JAX forward that loads MAX on the way: the two stacks tangled, as if one needed the other."""

import jax


def jax_forward(x, w, b):
    import max.graph  # noqa: F401  (the mistake: a JAX path that pulls in MAX)

    return jax.jit(lambda x, w, b: jax.nn.relu(x @ w + b))(x, w, b)
