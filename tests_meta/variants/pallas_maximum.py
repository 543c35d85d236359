"""A Pallas kernel with jnp.maximum, the bias row read by index, and the grid from a ceiling division."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(a_ref, b_ref, y_ref):
    y_ref[:, :] = jnp.maximum(a_ref[:, :] + b_ref[0, :], jnp.zeros((), a_ref.dtype))


def pallas_bias_relu(a, b, block_rows: int = 8):
    n, m = a.shape
    rows = pl.BlockSpec((block_rows, m), lambda i: (i, 0))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
        grid=((n + block_rows - 1) // block_rows,),
        in_specs=[rows, pl.BlockSpec((1, m), lambda i: (0, 0))],
        out_specs=rows,
        interpret=jax.devices()[0].platform == "cpu" or all(d.platform == "cpu" for d in a.devices()),
    )(a, jnp.reshape(b, (1, m)))
