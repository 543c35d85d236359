"""§12.5: compiling for a device is not running fast on it. Which dtype is fast depends on the
device's units: bf16 pays several times over fp32 on a GPU's tensor cores, pays on a CPU with bf16
dot-product instructions (AMX tiles or AVX512-BF16), and not on a CPU without them. And no one
tile is best for every shape: a skinny matmul wants many small tiles, a square one few large ones
(Triton's fused matmul on the GPU). Recorded as ratios. Nor is one tile right for every device:
compiled for four NVIDIA generations, the same tile asks for shared memory some of them have and
others lack."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, judged, per_gpu, timing
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains.tiles import Tile, TileLaunch

CPU_N, GPU_N = 1024, 4096
# A CPU without bf16 units runs torch's bf16 matmul on a slow path (an AMD EPYC without AVX512-BF16:
# 90x fp32 at 1024, 2.3 s a call; 30x at 256): the claim there (not much faster) shows at any size.
CPU_N_WITHOUT_UNITS = 256
# N, K, M. Recorded on the H200: on the skinny shape the small tile's 64 programs beat the large
# tile's 4 by 3.70-3.72x (6 interleaved series on an idle GPU; at K = 16384 it was 1.9-2.8x inside
# 12 suite runs, too noisy for any line); on the square one the large tile won by 5.5-7.4x in those
# 12 suite runs.
SHAPES = {"skinny 16x131072x1024": (16, 131072, 1024), "square 4096^3": (4096, 4096, 4096)}
# The line the best tile must win by: per_gpu.TILE_MARGIN (the H200's).
# bf16 over fp32 on a CPU, on one thread (so other test workers on the host cannot skew the two
# apart: the H200's 16-core host read 1.1-1.3x under -n 4 and -n 8 with every thread, 3.6x idle).
# Whether a CPU's bf16 units pay depends on the CPU and the library's kernels, not on the flag alone:
# an AMD EPYC with AVX512-BF16 2.34-2.67x over 5 runs; an Intel Xeon with AVX512-BF16, its bf16
# matmul in oneDNN 3.12's avx512_core_bf16 kernel, 0.60-0.66x. So a CPU with bf16 units reports its
# measurement with no line; one without them is judged (at most 2x: half the bytes). GPU lines:
# stackcheck.evidence.per_gpu.
SLOW_AT_MOST = 2.0  # no bf16 units: half the bytes, at most
SHARED_PER_BLOCK = per_gpu.SHARED_PER_BLOCK  # bytes a block may use, by compute capability
TILE_ARCHS = (75, 80, 86, 90)  # the generations the one tile is compiled for
PORTABLE_TILE = (128, 128, 64, 3, 8)  # Triton 3.9 asks 64, 128, 128 and 192 KiB for it on sm_75 to sm_90
SKINNY_AND_SQUARE = {  # the tile each of SHAPES should prefer
    "16x16x256": Tile(16, 16, 256, stages=3, warps=2),
    "128x256x64": Tile(128, 256, 64, stages=3, warps=8),
}


def cpu_bf16_units(torch) -> str | None:
    """The bf16 dot-product units this CPU has, by the flags Linux reports (AMX tiles, AVX512-BF16),
    or torch's own AMX probe where there is no /proc/cpuinfo; None when it has neither."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        probe = getattr(torch._C._cpu, "_is_amx_tile_supported", None)
        return "AMX" if probe and probe() else None
    return "AMX" if "amx_bf16" in flags else "AVX512-BF16" if "avx512_bf16" in flags else None


def bf16_speedup(torch, device: str, n: int, evidence, line: dict) -> tuple[float, float]:
    """(fp32 time / bf16 time, its noise floor) of one [n, n] @ [n, n] (fp32 with TF32 off),
    interleaved medians; the bf16 product is checked against float64. ``line``: judged.line's
    ``at_least`` or ``at_most`` the speed-up is judged by (none where the GPU has no line)."""
    from stackcheck.evidence.numerics import uniform
    from stackcheck.evidence.precision import torch_tf32

    x, w = (torch.from_numpy(uniform((n, n), seed=s)).to(device) for s in (125, 126))
    xb, wb = x.bfloat16(), w.bfloat16()

    def timer(a, b):
        def run():
            with torch_tf32(torch, False):
                return a @ b

        return timing.cuda_event_timer(run) if device == "cuda" else timing.host_timer(run)

    regime = "device-events" if device == "cuda" else "host-sync"
    threads = torch.get_num_threads()
    torch.set_num_threads(1 if device == "cpu" else threads)  # one core: see the CPU's lines above SLOW_AT_MOST
    try:
        runs = timing.interleaved({"fp32": timer(x, w), "bf16": timer(xb, wb)}, regime, trials=7, warmup=2)
    finally:
        torch.set_num_threads(threads)
    speedup, floor = timing.ratio(runs["fp32"], runs["bf16"]), max(map(timing.scatter, runs.values()))
    evidence(
        device=device,
        n=n,
        bf16_speedup=round(speedup, 2),
        floor=round(floor, 2),
        fp32=runs["fp32"].summary(),
        bf16=runs["bf16"].summary(),
        judged=[judged.line("bf16_speedup", speedup, **line, of=("fp32", "bf16"))] if line else [],
    )
    assert_matches_reference(
        (xb @ wb).float().cpu().numpy(),
        (xb.double() @ wb.double()).cpu().numpy(),
        dtype="bfloat16",
        k=n,
        what=f"bf16 X @ W on {device}",
    )
    return speedup, floor


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.parametrize("device", device_params("torch"))
@pytest.mark.gpu_needs(line=per_gpu.bf16_line)
def test_bf16_pays_only_where_bf16_matrix_units_are(device, evidence):
    """A GPU's tensor cores: bf16 several times faster (a GPU without bf16 tensor cores: not much
    faster). A CPU without bf16 dot-product instructions: not much faster; one with them reports its
    measurement (whether they pay depends on the CPU and the library's kernels)."""
    torch = need("torch")
    if device == "cuda":
        profile = device_profile.current()
        units = None if profile.lacks("bf16-tensor-cores") else "tensor cores"
        line = per_gpu.bf16_line(profile)
    else:
        units, line = cpu_bf16_units(torch), None
    evidence(bf16_units=units)
    judge = {"at_most": SLOW_AT_MOST} if units is None else {"at_least": line} if line is not None else {}
    n = GPU_N if device == "cuda" else CPU_N if units is not None else CPU_N_WITHOUT_UNITS
    speedup, floor = bf16_speedup(torch, device, n, evidence, judge)
    if line is None and units is not None and device == "cpu":
        pytest.skip(
            f"measured, no line for a CPU's bf16 units ({units}): bf16 {speedup:.2f}x fp32 on one thread "
            f"(noise {floor:.2f}); whether they pay depends on the CPU and the library's kernels"
        )
    if line is None and device == "cuda":
        device_profile.no_line(profile, {"bf16_speedup": round(speedup, 2), "floor": round(floor, 2)})
    try:
        judges.assert_bf16_pays_where_units_are(
            speedup, matrix_units=units is not None, fast_at_least=line, slow_at_most=SLOW_AT_MOST
        )
    except AssertionError:
        timing.call_it(speedup, 1.5, floor, {"bf16_speedup": speedup, "bf16_units": units})
        raise


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.cuda
@pytest.mark.triton
@pytest.mark.gpu_needs("triton-bf16", line=per_gpu.tile_margin)
@pytest.mark.gpu_tiles(*(TileLaunch(tile, "bf16", "tf32") for tile in SKINNY_AND_SQUARE.values()))
def test_no_one_tile_is_best_for_every_shape(evidence):
    torch = need("torch")
    from stackcheck.toolchains.triton_kernels import matmul_bias_relu
    from stackcheck.toolchains.workloads import _uniform

    tiles = SKINNY_AND_SQUARE
    medians, floors = {}, []
    for shape, (n, k, m) in SHAPES.items():
        x, w, b = (
            _uniform(n, k, dtype="bfloat16", seed=1),
            _uniform(k, m, dtype="bfloat16", seed=2),
            _uniform(m, dtype="bfloat16", seed=3),
        )
        want = torch.relu(x.double() @ w.double() + b.double())
        for name, tile in tiles.items():
            assert_matches_reference(
                matmul_bias_relu(x, w, b, tile).float(),
                want,
                dtype="bfloat16",
                k=k,
                what=f"the fused matmul, tile {name}, {shape}",
            )
        runs = timing.interleaved(
            {
                name: timing.cuda_event_timer(lambda t=tile: matmul_bias_relu(x, w, b, t))
                for name, tile in tiles.items()
            },
            "device-events",
            trials=7,
            warmup=2,
        )
        medians[shape] = {name: m.median for name, m in runs.items()}
        floors += [timing.scatter(m) for m in runs.values()]
    evidence(medians_ms={s: {t: round(v * 1e3, 3) for t, v in ts.items()} for s, ts in medians.items()})
    profile = device_profile.current()
    margin = per_gpu.tile_margin(profile)
    if margin is None:
        device_profile.no_line(profile, {"medians_ms": medians})
    try:
        evidence(best=judges.assert_best_tile_differs(medians, margin)["best"])
    except AssertionError:
        spread = min(max(ts.values()) / min(ts.values()) for ts in medians.values())
        timing.call_it(spread, margin, max(floors), {"medians": medians})
        raise


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.triton
def test_one_tile_fits_some_devices_and_not_others(evidence):
    """One tile compiled for sm_75, sm_80, sm_86 and sm_90 on this machine (no GPU needed): the
    shared memory each build asks for fits some of those devices and not others."""
    torch = need("torch")
    from stackcheck.toolchains.triton_kernels import matmul_bias_relu, tile_compiled_sm90

    tile = Tile(*PORTABLE_TILE)
    shared = {arch: tile_compiled_sm90(tile, "fp32", "ieee", arch=arch).metadata.shared for arch in TILE_ARCHS}
    limits = {arch: SHARED_PER_BLOCK[arch] for arch in TILE_ARCHS}
    evidence(**judges.assert_tile_fits_some_devices_only(shared, limits))
    x, w, b = make_inputs(130, 70, 129, seed=57)  # 2 x 2 programs, K in two steps, every edge masked
    y = matmul_bias_relu(*(torch.from_numpy(a) for a in (x, w, b)), tile, precision="ieee")
    assert_matches_reference(y.numpy(), reference_forward(x, w, b), dtype="float32", k=70, what=f"tile {tile}")


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.gpu_tiles(TileLaunch(Tile(*PORTABLE_TILE), "fp32", "ieee", may_not_fit=True))
def test_this_gpu_allows_what_its_generation_allows(device, evidence):
    """The GPU's own limit is its generation's row, and the tile runs here exactly when it fits."""
    torch = need("torch")
    from triton.runtime.errors import OutOfResources

    from stackcheck.toolchains.triton_kernels import matmul_bias_relu, tile_compiled_sm90

    props = torch.cuda.get_device_properties(device)
    arch, limit = props.major * 10 + props.minor, props.shared_memory_per_block_optin
    evidence(arch=f"sm_{arch}", shared_memory_per_block_optin=limit)
    if arch not in SHARED_PER_BLOCK:
        pytest.skip(f"sm_{arch} is not among the generations compared ({sorted(SHARED_PER_BLOCK)})")
    assert limit == SHARED_PER_BLOCK[arch], f"sm_{arch} allows {limit} bytes a block, not {SHARED_PER_BLOCK[arch]}"
    tile = Tile(*PORTABLE_TILE)
    x, w, b = make_inputs(130, 70, 129, seed=58)
    operands = [torch.from_numpy(a).to(device) for a in (x, w, b)]
    if tile_compiled_sm90(tile, "fp32", "ieee", arch=arch).metadata.shared > limit:
        with pytest.raises(OutOfResources):
            matmul_bias_relu(*operands, tile, precision="ieee")
        return
    y = matmul_bias_relu(*operands, tile, precision="ieee")
    assert_matches_reference(y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=70, what=f"tile {tile}")
