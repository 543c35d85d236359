"""§5.3: the tile size connects the compute unit's granularity with memory capacity. The tiled
matmul is right for every tiling, at sizes no tile divides; each tiling's shared memory (Triton's
compiled metadata) grows with the tile; a tile past the device's shared memory does not launch."""

import pytest

from stackcheck.evidence.numerics import make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains.tiles import TILES, Tile, TileLaunch

TOO_BIG = (128, 256, 64, 4, 8)
SM90_SHARED_OPTIN = 227 * 1024  # bytes a block may use on sm_90 (H100/H200), for the CPU half


def shared_bytes(tiles) -> list[int]:
    from stackcheck.toolchains.triton_kernels import tile_compiled_sm90

    return [tile_compiled_sm90(Tile(*sizes)).metadata.shared for sizes in tiles]


@pytest.mark.claim("S5.3-tiling")
@pytest.mark.triton
def test_every_tiling_is_right_and_shared_memory_grows_with_the_tile(evidence):
    from stackcheck.toolchains.triton_kernels import assert_tilings_right

    assert_tilings_right("cpu", TILES)
    shared = shared_bytes(TILES + [TOO_BIG])
    evidence(shared_bytes=dict(zip(map(str, TILES + [TOO_BIG]), shared)))
    assert shared == sorted(shared) and shared[-2] > shared[0], f"shared memory per tiling: {shared}"
    assert shared[-1] > SM90_SHARED_OPTIN >= shared[-2], (
        f"{TOO_BIG} needs {shared[-1]} bytes; sm_90 allows {SM90_SHARED_OPTIN}; {TILES[-1]} needs {shared[-2]}"
    )


@pytest.mark.claim("S5.3-tiling")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.gpu_tiles(
    *(TileLaunch(Tile(*sizes), "fp32", "tf32") for sizes in TILES),
    TileLaunch(Tile(*TOO_BIG), "fp32", "tf32", may_not_fit=True),
)
def test_every_tiling_runs_and_a_tile_past_shared_memory_does_not(device, evidence):
    torch = need("torch")
    from triton.runtime.errors import OutOfResources

    from stackcheck.toolchains.triton_kernels import assert_tilings_right, matmul_bias_relu

    assert_tilings_right(device, TILES)
    limit = torch.cuda.get_device_properties(device).shared_memory_per_block_optin
    x, w, b = (torch.from_numpy(a).to(device) for a in make_inputs(100, 70, 45, seed=54))
    with pytest.raises(OutOfResources) as refused:
        matmul_bias_relu(x, w, b, Tile(*TOO_BIG))
    evidence(shared_memory_per_block_optin=limit, refused=str(refused.value)[:200])
