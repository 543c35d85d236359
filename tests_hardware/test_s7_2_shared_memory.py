"""§7.2: "Shared memory | 같은 스레드 블록안에서 공유해서 사용할 수 있는 빠른 저장 공간 | 입력 조각의 재사용 등" (and
§5.3's pieces brought in and reused). A tiled matmul copies its input tiles from global memory into
shared memory, its block's threads wait for each other at a barrier and read them back (its sm_90
PTX, on any machine), keeping a stage of them there (Triton's metadata); an elementwise kernel, which
reuses nothing, shares nothing. On the GPU, what its SMs read from L2 is one read of each input tile
per program: a larger tile reads less, each value brought in reused by tile-many multiply-adds (ncu)."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import counters, tiles

SIZES = [(t.tile.n, t.tile.m, t.tile.k, t.tile.stages, t.tile.warps) for t in tiles.REUSED]
READS = counters.request("tiled_matmuls", "all", counters.SM_READS, n=per_gpu.TILE_READS_N)


@pytest.mark.claim("S7.2-shared")
@pytest.mark.triton
def test_a_tiled_matmul_stages_its_input_tiles_in_shared_memory(evidence):
    from stackcheck.toolchains import triton_kernels as tk

    tiled = {}
    for launch in tiles.REUSED:
        t, compiled = launch.tile, tk.tile_compiled_sm90(launch.tile, launch.dtype, launch.precision)
        one_stage = (t.n * t.k + t.k * t.m) * 4  # an X tile and a W tile, float32
        tiled[f"{t.n}x{t.m}"] = {"ptx": compiled.asm["ptx"], "shared": compiled.metadata.shared, "tiles": one_stage}
    evidence(**judges.assert_tiles_staged_in_shared(tiled, tk.bias_relu_ptx_sm90()))
    tk.assert_tilings_right("cpu", SIZES)


@pytest.mark.claim("S7.2-shared")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.ncu(READS)  # the tiles run in ncu's child; the numeric test below declares them
@pytest.mark.gpu_needs(line=per_gpu.tile_reads_window)
def test_each_value_brought_into_an_sm_is_reused_from_shared_memory(device, evidence):
    profile = device_profile.current()
    window = per_gpu.tile_reads_window(profile)
    kernels = counters.profile(READS)
    found = judges.assert_tiles_reused(kernels, [t.tile for t in tiles.REUSED], per_gpu.TILE_READS_N, window)
    if window is None:
        device_profile.no_line(profile, found)
    evidence(device=device, **found)


@pytest.mark.claim("S7.2-shared")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.gpu_tiles(*tiles.REUSED)
@pytest.mark.checks("the tilings' numbers, not their reuse from shared memory")
def test_the_reused_tiles_compute_the_line_on_the_gpu(device):
    """The numbers of the tilings whose reads are counted: no counters needed."""
    from stackcheck.toolchains import triton_kernels as tk

    tk.assert_tilings_right(device, SIZES)
