"""A MAX graph builder that loads JAX on the way: MAX tangled with JAX, as if one needed the other."""


def max_steps(x, w, b):
    import jax  # noqa: F401  (the mistake: a MAX path that pulls in JAX)
    from max.graph import ops

    a = ops.matmul(x, w)
    z = a + b
    return a, z, ops.relu(z)
