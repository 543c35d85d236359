"""§12.1: each stack has its way to write a kernel by hand (Triton, Pallas, Mojo). The Pallas bias +
ReLU runs a grid of row blocks; boundary sizes as parameters, the last block partial. The launch is
read from JAX itself: one pallas_call over cdiv(N, block_rows) programs."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import pallas


def assert_bias_relu(y, a_np, b_np, **context):
    """Y is exactly ReLU(A + b): one float32 add and a max."""
    __tracebackhide__ = True
    expected = np.maximum(a_np + b_np, np.float32(0))
    assert_exact(jax_out(y, "float32").astype(np.float32), expected, what="ReLU(A + b) by Pallas", **context)


@pytest.mark.claim("S12.1-pallas")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu",)))
@pytest.mark.parametrize("n, m, block_rows", [(1, 5, 8), (7, 5, 8), (8, 5, 8), (33, 65, 8), (16, 3, 4)])
def test_pallas_bias_relu_is_exact_at_every_block_boundary(impl, stack, device, n, m, block_rows):
    need("jax")
    a_np, b_np = uniform((n, m), seed=n * 100 + m), uniform((m,), seed=m)
    a, b = jax_in((a_np, b_np), device, "float32")
    y = impl.pallas_bias_relu(a, b, block_rows=block_rows)
    assert_bias_relu(y, a_np, b_np, N=n, M=m, block_rows=block_rows, stack=stack, device=device)


@pytest.mark.claim("S12.1-pallas")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu",)))
@pytest.mark.parametrize("n, block_rows", [(33, 8), (16, 4), (1, 8)])
def test_pallas_bias_relu_is_one_pallas_call_over_cdiv_row_blocks(impl, stack, device, n, block_rows):
    """Right numbers are not a Pallas kernel: jnp.maximum(a + b, 0) gives them too. The function must
    launch one pallas_call whose grid has one program per block of rows, the last one partial."""
    need("jax")
    a_np, b_np = uniform((n, 5), seed=n), uniform((5,), seed=5)
    a, b = jax_in((a_np, b_np), device, "float32")
    with pallas.recorded_grids() as grids:
        y = impl.pallas_bias_relu(a, b, block_rows=block_rows)
    expected_grid = (-(-n // block_rows),)
    assert grids == [expected_grid], (
        f"one pallas_call over cdiv(N={n}, block_rows={block_rows}) = {expected_grid[0]} programs; launched {grids}"
    )
    assert_bias_relu(y, a_np, b_np, N=n, block_rows=block_rows, stack=stack, device=device)


@pytest.mark.claim("S12.1-pallas")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cuda",)))
@pytest.mark.parametrize("n", [1, 33])
def test_pallas_bias_relu_is_compiled_for_the_gpu(impl, stack, device, n):
    """On a GPU the same function is no interpreter: its one pallas_call is compiled for the device
    (through Triton on NVIDIA), and the numbers stay exact at a partial block."""
    need("jax")
    m, block_rows = 64, 8  # Triton's blocks are powers of two
    a_np, b_np = uniform((n, m), seed=n + 120), uniform((m,), seed=121)
    a, b = jax_in((a_np, b_np), device, "float32")
    interpreted = []
    with pallas.recorded_grids(interpreted) as grids:
        y = impl.pallas_bias_relu(a, b, block_rows=block_rows)
    assert grids == [(-(-n // block_rows),)] and interpreted == [False], (
        f"one pallas_call over cdiv(N, block_rows) programs, compiled (not interpreted) on {device}: "
        f"grids {grids}, interpreted {interpreted}"
    )
    assert_bias_relu(y, a_np, b_np, N=n, M=m, block_rows=block_rows, stack=stack, device=device)
