"""A Pallas grid of N // block_rows programs (floor, not ceil): the last, partial block is never run."""

from stackcheck.impl import reference


def pallas_bias_relu(a, b, block_rows=8):
    import jax
    from jax.experimental import pallas as pl

    n, m = a.shape
    return pl.pallas_call(
        reference._pallas_bias_relu_kernel,
        out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
        grid=(n // block_rows,),
        in_specs=[pl.BlockSpec((block_rows, m), lambda i: (i, 0)), pl.BlockSpec((1, m), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block_rows, m), lambda i: (i, 0)),
        interpret=True,
    )(a, b.reshape(1, m))
