"""§11.2 and experiment G: the bias+ReLU kernel is right for every size, the mask keeps every load
and store in bounds. Canaries prove it: the output is a view inside a larger buffer filled with a
sentinel that must survive, and the inputs sit inside NaN padding that must never reach the output."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

PAD = 2048  # more than any block: an unmasked program would run past it into the padding
SENTINEL = -7.0  # never an output of ReLU
BLOCKS = [16, 64, 256, 1024]
SIZES = [(33, 65), (1, 1), (0, 5), (5, 0), (7, 13), (31, 37), (16, 16), (3, 341)]


def inside_padding(torch, values, fill):
    """(whole buffer, contiguous view of ``values``' shape in its middle)."""
    flat = values.reshape(-1)
    whole = torch.full((PAD + flat.numel() + PAD,), fill, dtype=values.dtype, device=values.device)
    whole[PAD : PAD + flat.numel()] = flat
    return whole, whole[PAD : PAD + flat.numel()].view(values.shape)


def check_in_bounds(impl, device, n, m, block_size, seed=0):
    torch = need("torch")
    a_np, _, b_np = make_inputs(n, m, m, seed=seed)  # A[N, M] and b[M], values in [-1, 1]
    _, a = inside_padding(torch, torch.from_numpy(a_np).to(device), float("nan"))
    _, b = inside_padding(torch, torch.from_numpy(b_np).to(device), float("nan"))
    out_whole, out = inside_padding(torch, torch.empty(n, m, device=device), SENTINEL)
    impl.triton_bias_relu(a, b, block_size=block_size, out=out)
    outside = torch.cat([out_whole[:PAD], out_whole[PAD + n * m :]])
    changed = int((outside != SENTINEL).sum())
    assert changed == 0, (
        f"{changed} canary cells around the output changed: a store ran out of bounds "
        f"(N={n}, M={m}, BLOCK_SIZE={block_size}, device={device})"
    )
    assert not bool(out.isnan().any()), (
        f"NaN padding reached the output: a load ran out of bounds "
        f"(N={n}, M={m}, BLOCK_SIZE={block_size}, device={device})"
    )
    expected = np.maximum(a_np.astype(np.float64) + b_np, 0)
    assert_matches_reference(
        out.cpu().numpy(),
        expected,
        dtype="float32",
        k=1,
        what="ReLU(A + b)",
        N=n,
        M=m,
        BLOCK_SIZE=block_size,
        device=device,
        seed=seed,
    )


@pytest.mark.claim("S11.2-mask")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.parametrize("block_size", BLOCKS)
@pytest.mark.parametrize("n, m", SIZES)
def test_boundary_sizes(impl, device, block_size, n, m):
    check_in_bounds(impl, device, n, m, block_size)


@pytest.mark.claim("S11.2-mask")
@pytest.mark.parametrize("device", device_params("triton"))
@given(
    block_size=st.sampled_from(BLOCKS),
    blocks=st.integers(1, 4),
    offset=st.sampled_from([-1, 0, 1]),
    m=st.sampled_from([1, 3, 16, 65, 127]),
    seed=st.integers(0, 1000),
)
def test_sizes_around_block_multiples(impl, device, block_size, blocks, offset, m, seed):
    """n*m lands one below, on, or one above a multiple of the block (rows rounded up to cover it)."""
    target = blocks * block_size + offset
    n = max(1, -(-target // m))
    check_in_bounds(impl, device, n, m, block_size, seed)
