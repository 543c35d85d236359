"""A Pallas kernel with b passed as b[None, :], jax.nn.relu inside, BlockSpecs by keyword."""

import jax
from jax.experimental import pallas as pl


def _kernel(a_ref, b_ref, y_ref):
    y_ref[...] = jax.nn.relu(a_ref[...] + b_ref[...])


def pallas_bias_relu(a, b, block_rows: int = 8):
    n, m = a.shape
    on_cpu = all(d.platform == "cpu" for d in a.devices())
    return pl.pallas_call(
        _kernel,
        grid=(pl.cdiv(n, block_rows),),
        in_specs=[
            pl.BlockSpec(block_shape=(block_rows, m), index_map=lambda i: (i, 0)),
            pl.BlockSpec(block_shape=(1, m), index_map=lambda i: (0, 0)),
        ],
        out_specs=pl.BlockSpec(block_shape=(block_rows, m), index_map=lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct((n, m), a.dtype),
        interpret=on_cpu,
    )(a, b[None, :])
