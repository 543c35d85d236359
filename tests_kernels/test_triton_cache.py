"""§2.4 for hand-written kernels: Triton compiles a kernel once per set of constexprs (and argument
specializations); new data with the same ones reuses the compiled program."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import triton_kernels


def jit_cache_misses(kernel):
    """Count compilations of ``kernel``: Triton's JIT cache hook, whose home moved between versions."""
    triton = need("triton")
    knobs = getattr(triton, "knobs", None)
    calls = []

    def hook(*args, **kwargs):
        calls.append(kwargs.get("key") or kwargs.get("fn"))
        return False

    if knobs is not None and hasattr(knobs.runtime, "jit_cache_hook"):
        return calls, (
            lambda: setattr(knobs.runtime, "jit_cache_hook", hook),
            lambda: setattr(knobs.runtime, "jit_cache_hook", None),
        )
    if hasattr(kernel, "cache_hook"):
        return calls, (
            lambda: setattr(type(kernel), "cache_hook", hook),
            lambda: setattr(type(kernel), "cache_hook", None),
        )
    pytest.skip(f"Triton {triton.__version__} has no JIT cache hook that stackcheck knows")


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_new_data_reuses_new_block_size_recompiles(device):
    torch = need("torch")
    kernels = triton_kernels.jit_both(triton_kernels._bias_relu_kernel)  # fresh: no earlier test's cache
    calls, (install, remove) = jit_cache_misses(kernels[0])
    install()
    try:
        for block_size, data in ((256, 1), (256, 2), (256, 3), (1024, 4)):
            a_np, _, b_np = make_inputs(33, 65, 65, seed=data)
            a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
            y = triton_kernels.bias_relu(a, b, block_size=block_size, kernels=kernels)
            assert_matches_reference(
                y,
                np.maximum(a_np.astype(np.float64) + b_np, 0),
                dtype="float32",
                k=1,
                what="ReLU(A + b)",
                BLOCK_SIZE=block_size,
                seed=data,
            )
    finally:
        remove()
    assert len(calls) == 2, f"one compile for BLOCK_SIZE=256 (reused for new data), one for 1024: {calls}"
