"""The Pallas bias + ReLU run by Pallas's interpreter on every device: the right numbers and the
right grid, but on a GPU no kernel was compiled for it."""

import jax
from jax.experimental import pallas as pl

from stackcheck.impl.reference import _pallas_bias_relu_kernel


def pallas_bias_relu(a, b, block_rows: int = 8):
    n, m = a.shape
    return pl.pallas_call(
        _pallas_bias_relu_kernel,
        out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
        grid=(pl.cdiv(n, block_rows),),
        in_specs=[pl.BlockSpec((block_rows, m), lambda i: (i, 0)), pl.BlockSpec((1, m), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block_rows, m), lambda i: (i, 0)),
        interpret=True,
    )(a, b.reshape(1, m))
