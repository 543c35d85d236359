"""§5.1: target lowering uses the device's own features: on a CPU, Inductor writes its fused
bias + ReLU with vector operations (ATen's Vectorized<float>); on an H100/H200, a bf16 matmul tile
becomes warpgroup MMA: wgmma in Triton's PTX for sm_90 and HGMMA in its SASS (any machine)."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir
from stackcheck.toolchains.inductor import assert_vectorized, compile_and_read
from stackcheck.toolchains.tiles import Tile, TileLaunch


@pytest.mark.claim("S5.1-target")
@pytest.mark.torch_compile
def test_inductor_vectorizes_the_cpu_kernel(impl):
    torch = need("torch")
    x, w, b = make_inputs(64, 32, 16, seed=51)
    generated = compile_and_read(impl.torch_forward, *(torch.from_numpy(a) for a in (x, w, b)))
    assert_vectorized(generated)
    assert_matches_reference(generated.result.numpy(), reference_forward(x, w, b), dtype="float32", k=32)


@pytest.mark.claim("S5.1-target")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.gpu_tiles(TileLaunch(Tile(64, 64, 32), "fp32", "tf32"))  # bf16-exact values in float32 tensors
def test_a_bf16_tile_for_sm90_lowers_to_warpgroup_mma(device):
    """The tile's numbers come from the interpreter on a CPU and from the GPU itself on cuda, where
    the bf16-exact inputs make TF32's rounding exact: float32's tolerance holds on both."""
    torch = need("torch")
    from stackcheck.toolchains.triton_kernels import matmul_bias_relu, tile_compiled_sm90

    stages = ir.triton_stages(tile_compiled_sm90(Tile(64, 64, 32), "bf16"))
    judges.assert_warpgroup_mma(stages["ptx"], stages["sass"])
    x, w, b = make_inputs(40, 32, 24, dtype="bfloat16", seed=52)
    tile = Tile(16, 16, 16) if device == "cpu" else Tile(64, 64, 32)  # the interpreter; the tile compiled above
    y = matmul_bias_relu(*(torch.from_numpy(a).to(device) for a in (x, w, b)), tile)
    assert_matches_reference(
        as_numpy(y),
        np.maximum(x.astype(np.float64) @ w + b, 0),
        dtype="float32",
        k=32,
        what=f"the tiled kernel on bf16-exact inputs on {device}",
    )
