"""jax_forward is one jitted program, but jax_steps, written beside it, runs op by op: A, Z and Y
are right, and nothing of it is compiled as one program."""

import jax

from stackcheck.impl.reference import check_operands


@jax.jit
def _forward(x, w, b):
    return jax.nn.relu(x @ w + b)


def jax_forward(x, w, b):
    check_operands(x, w, b)
    return _forward(x, w, b)


def jax_steps(x, w, b):
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, jax.nn.relu(z)
