"""§4.2: a high-level IR keeps tensor operations; lower levels expose loops, addresses and
loads/stores. Triton's own stages for sm_90, on any machine: ttir -> ttgir -> llir -> PTX -> cubin,
and the cubin's SASS: PTX is a virtual ISA; the machine code is what ptxas makes of it."""

import pytest

from stackcheck import judges
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir
from stackcheck.toolchains.tiles import Tile, TileLaunch

TILE = Tile(32, 32, 16)


@pytest.mark.claim("S4.2-ir-levels")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.gpu_tiles(TileLaunch(TILE, "fp32", "tf32"))
def test_tritons_stages_lower_tensors_to_addresses_and_instructions(evidence, device):
    """The kernel whose stages are read is then run: the interpreter on a CPU, the GPU on cuda."""
    from stackcheck.toolchains.triton_kernels import assert_tilings_right, tile_compiled_sm90

    tile = TILE
    facts = judges.assert_lowering_levels(ir.triton_stages(tile_compiled_sm90(tile, "fp32", "ieee")))
    evidence(stages=facts)
    assert_tilings_right(device, [(tile.n, tile.m, tile.k, tile.stages)])  # the same kernel, run
