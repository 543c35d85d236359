"""§11.3: BLOCK_SIZE is how many elements one program handles, not a thread count. The grid is
cdiv(n, BLOCK_SIZE) programs; on CUDA each program runs num_warps x 32 threads."""
import pytest

from stackcheck import need, stack_params
from stackcheck import triton_kernels
from stackcheck.numerics import make_inputs


@pytest.mark.claim("S11.3-program")
@pytest.mark.parametrize("stack, device", stack_params("triton"))
@pytest.mark.parametrize("n, m, block_size", [(33, 65, 256), (1, 1, 256), (4, 64, 256), (33, 65, 1024)])
def test_the_grid_is_cdiv_n_block_size_programs(impl, launches, stack, device, n, m, block_size):
    torch = need("torch")
    a, _, b = (torch.from_numpy(v).to(device) for v in make_inputs(n, m, m))
    y = impl.triton_bias_relu(a, b, block_size=block_size)
    assert launches() == [(-(-n * m // block_size),)], (
        f"{n * m} elements in blocks of {block_size}: expected cdiv = {-(-n * m // block_size)} programs, "
        f"launched {launches()}")
    torch.testing.assert_close(y, torch.relu(a + b))


@pytest.mark.claim("S11.3-program")
@pytest.mark.parametrize("stack, device", stack_params("triton", devices=("cuda",)))
@pytest.mark.parametrize("block_size", [256, 1024])
def test_block_size_is_not_the_thread_count(stack, device, block_size, evidence):
    torch = need("torch")
    a, b = torch.rand(33, 65, device=device), torch.rand(65, device=device)
    y = torch.empty_like(a)
    kernel = triton_kernels.compiled_kernel.warmup(a, b, y, a.numel(), M=65, BLOCK_SIZE=block_size, grid=(1,))
    warp = getattr(torch.cuda.get_device_properties(device), "warp_size", 32)  # NVIDIA: 32
    threads = kernel.metadata.num_warps * warp
    evidence(block_size=block_size, num_warps=kernel.metadata.num_warps, threads_per_program=threads)
    assert threads != block_size, f"{threads} threads handle {block_size} elements per program"
    assert block_size % threads == 0, "each thread handles several elements"
