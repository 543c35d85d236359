"""§11.3: BLOCK_SIZE is how many elements one program handles, not a thread count. The grid is
cdiv(n, BLOCK_SIZE) programs; on CUDA each program runs num_warps x 32 threads.

What the course requires of a student's kernel: one launch whose programs each take a block of
BLOCK_SIZE elements, the course's 1-D grid of cdiv(N * M, BLOCK_SIZE) programs or a 2-D grid
(N, cdiv(M, BLOCK_SIZE)) that tiles each row (at most one partial block a row). A program per
element, or a grid that drops the last partial block, is not that."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.impl import kernel_source
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import triton_kernels


@pytest.mark.claim("S11.3-program")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.parametrize("n, m, block_size", [(33, 65, 256), (1, 1, 256), (4, 64, 256), (33, 65, 1024)])
def test_the_grid_is_cdiv_n_block_size_programs(impl, launches, device, n, m, block_size):
    torch = need("torch")
    a_np, _, b_np = make_inputs(n, m, m)
    a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
    y = impl.triton_bias_relu(a, b, block_size=block_size)
    least = -(-n * m // block_size)  # cdiv(N * M, BLOCK_SIZE): every program takes a full block but the last
    grids = launches()
    programs = [int(np.prod(grid)) for grid in grids]
    assert len(grids) == 1 and least <= programs[0] <= least + n, (
        f"{n * m} elements, BLOCK_SIZE = {block_size} elements a program: one launch of cdiv = {least} programs "
        f"(a 1-D grid), or up to one partial block per row ({least + n}, a grid (N, cdiv(M, BLOCK_SIZE))); "
        f"launched {grids}"
    )
    assert_matches_reference(
        y,
        np.maximum(a_np.astype(np.float64) + b_np, 0),
        dtype="float32",
        k=1,
        what="ReLU(A + b)",
        N=n,
        M=m,
        BLOCK_SIZE=block_size,
    )


@pytest.mark.claim("S11.3-program")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.parametrize("block_size", [256, 1024])
def test_the_learners_kernel_takes_block_size_elements_on_its_own_threads(impl, launches, device, block_size):
    """The implementation's own kernel, built from its source for sm_90 on any machine (never launched
    there): its program runs num_warps x 32 threads, read from the compiled metadata, whatever
    BLOCK_SIZE is; the elements it covers are BLOCK_SIZE a program (the grid test above)."""
    torch = need("torch")
    a_np, _, b_np = make_inputs(33, 65, 65, seed=block_size)
    a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
    y = impl.triton_bias_relu(a, b, block_size=block_size)
    (launch,) = launches()
    metadata = kernel_source.compiled(launch).metadata
    threads = metadata.num_warps * 32  # the warp size of every NVIDIA GPU so far
    assert threads != block_size, (
        f"the kernel's program runs {threads} threads ({metadata.num_warps} warps) for BLOCK_SIZE = {block_size} "
        "elements: BLOCK_SIZE is the elements a program takes, not its thread count; leave num_warps to Triton "
        "or set it apart from the block"
    )
    expected = np.maximum(a_np.astype(np.float64) + b_np, 0)
    assert_matches_reference(y, expected, dtype="float32", k=1, what="ReLU(A + b)", BLOCK_SIZE=block_size)


@pytest.mark.claim("S11.3-program")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.parametrize("block_size, num_warps", [(256, 4), (1024, 4), (1024, 8), (256, 2)])
def test_block_size_is_not_the_thread_count(device, block_size, num_warps, evidence):
    """num_warps is set here, not left to Triton's default: threads = num_warps x the warp size."""
    torch = need("torch")
    a_np, _, b_np = make_inputs(33, 65, 65)
    a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
    y = torch.empty_like(a)
    kernel = triton_kernels.compiled_kernel.warmup(
        a, b, y, a.numel(), M=65, BLOCK_SIZE=block_size, num_warps=num_warps, grid=(1,)
    )
    warp = getattr(torch.cuda.get_device_properties(device), "warp_size", 32)  # NVIDIA: 32
    assert kernel.metadata.num_warps == num_warps, f"compiled with {kernel.metadata.num_warps} warps, asked {num_warps}"
    threads = num_warps * warp
    evidence(block_size=block_size, num_warps=num_warps, threads_per_program=threads)
    assert threads != block_size, f"{threads} threads handle {block_size} elements per program"
    assert block_size % threads == 0, f"each of {threads} threads handles {block_size // threads} elements"
