"""§2.4 for hand-written kernels: Triton compiles a kernel once per set of constexprs (and argument
specializations); new data with the same ones reuses the compiled program."""
import pytest

from stackcheck import need, stack_params
from stackcheck import triton_kernels


def jit_cache_misses(kernel):
    """Count compilations of ``kernel``: Triton's JIT cache hook, whose home moved between versions."""
    triton = need("triton")
    knobs = getattr(triton, "knobs", None)
    calls = []

    def hook(*args, **kwargs):
        calls.append(kwargs.get("key") or kwargs.get("fn"))
        return False

    if knobs is not None and hasattr(knobs.runtime, "jit_cache_hook"):
        return calls, (lambda: setattr(knobs.runtime, "jit_cache_hook", hook),
                       lambda: setattr(knobs.runtime, "jit_cache_hook", None))
    if hasattr(kernel, "cache_hook"):
        return calls, (lambda: setattr(type(kernel), "cache_hook", hook),
                       lambda: setattr(type(kernel), "cache_hook", None))
    pytest.skip(f"Triton {triton.__version__} has no JIT cache hook that stackcheck knows")


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.parametrize("stack, device", stack_params("triton", devices=("cuda",)))
def test_new_data_reuses_new_block_size_recompiles(stack, device):
    torch = need("torch")
    kernels = triton_kernels.jit_both(triton_kernels._bias_relu_kernel)  # fresh: no earlier test's cache
    calls, (install, remove) = jit_cache_misses(kernels[0])
    install()
    try:
        for block_size, data in ((256, 1), (256, 2), (256, 3), (1024, 4)):
            torch.manual_seed(data)
            a, b = torch.randn(33, 65, device=device), torch.randn(65, device=device)
            y = triton_kernels.bias_relu(a, b, block_size=block_size, kernels=kernels)
            torch.testing.assert_close(y, torch.relu(a + b))
    finally:
        remove()
    assert len(calls) == 2, f"one compile for BLOCK_SIZE=256 (reused for new data), one for 1024: {calls}"
