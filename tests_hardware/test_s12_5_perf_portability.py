"""§12.5: compiling for a device is not running fast on it. Which dtype is fast depends on the
device's units: bf16 pays several times over fp32 on a GPU's tensor cores and not on a CPU without
bf16 matrix units. And no one tile is best for every shape: a skinny matmul wants many small
tiles, a square one few large ones (Triton's fused matmul on the GPU). Recorded as ratios."""
import pytest

from stackcheck import chip, device_params, need, timing
from stackcheck.numerics import assert_matches_reference

CPU_N, GPU_N = 1024, 4096
SHAPES = {"skinny 16x8192x8192": (16, 8192, 8192), "square 4096^3": (4096, 4096, 4096)}  # N, K, M


def cpu_has_bf16_matrix_units(torch) -> bool:
    """AMX tiles, as torch sees them (the units that make bf16 fast on a CPU)."""
    probe = getattr(torch._C._cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


def bf16_speedup(torch, device: str, n: int, evidence) -> tuple[float, float]:
    """(fp32 time / bf16 time, its noise floor) of one [n, n] @ [n, n] (fp32 with TF32 off),
    interleaved medians; the bf16 product is checked against float64."""
    from stackcheck.numerics import uniform
    from stackcheck.precision import torch_tf32

    x, w = (torch.from_numpy(uniform((n, n), seed=s)).to(device) for s in (125, 126))
    xb, wb = x.bfloat16(), w.bfloat16()

    def timer(a, b):
        def run():
            with torch_tf32(torch, False):
                return a @ b
        return timing.cuda_event_timer(run) if device == "cuda" else timing.host_timer(run)
    regime = "device-events" if device == "cuda" else "host-sync"
    runs = timing.interleaved({"fp32": timer(x, w), "bf16": timer(xb, wb)}, regime, trials=7, warmup=2)
    speedup, floor = timing.ratio(runs["fp32"], runs["bf16"]), max(map(timing.scatter, runs.values()))
    evidence(device=device, n=n, bf16_speedup=round(speedup, 2), floor=round(floor, 2),
             fp32=runs["fp32"].summary(), bf16=runs["bf16"].summary())
    assert_matches_reference((xb @ wb).float().cpu().numpy(), (xb.double() @ wb.double()).cpu().numpy(),
                             dtype="bfloat16", k=n, what=f"bf16 X @ W on {device}")
    return speedup, floor


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.parametrize("device", device_params("torch"))
def test_bf16_pays_only_where_bf16_matrix_units_are(device, evidence):
    """A GPU's tensor cores: bf16 several times faster. A CPU without AMX: not faster."""
    torch = need("torch")
    if device == "cpu" and cpu_has_bf16_matrix_units(torch):
        pytest.skip("this CPU has AMX bf16 tiles: bf16 may pay here as on a GPU; the claim's CPU half is for "
                    "CPUs without them")
    speedup, floor = bf16_speedup(torch, device, GPU_N if device == "cuda" else CPU_N, evidence)
    try:
        chip.assert_bf16_pays_where_units_are(speedup, matrix_units=device == "cuda")
    except AssertionError:
        timing.call_it(speedup, 1.5, floor, {"bf16_speedup": speedup})
        raise


@pytest.mark.claim("S12.5-perf-portability")
@pytest.mark.cuda
@pytest.mark.triton
def test_no_one_tile_is_best_for_every_shape(evidence):
    torch = need("torch")
    from stackcheck.triton_kernels import Tile, matmul_bias_relu
    from stackcheck.workloads import _uniform

    tiles = {"16x32x128": Tile(16, 32, 128, stages=3, warps=4), "128x128x64": Tile(128, 128, 64, stages=3, warps=8)}
    medians, floors = {}, []
    for shape, (n, k, m) in SHAPES.items():
        x, w, b = _uniform(n, k, dtype="bfloat16", seed=1), _uniform(k, m, dtype="bfloat16", seed=2), \
            _uniform(m, dtype="bfloat16", seed=3)
        want = torch.relu(x.double() @ w.double() + b.double())
        for name, tile in tiles.items():
            assert_matches_reference(matmul_bias_relu(x, w, b, tile).float(), want, dtype="bfloat16", k=k,
                                     what=f"the fused matmul, tile {name}, {shape}")
        runs = timing.interleaved({name: timing.cuda_event_timer(lambda t=tile: matmul_bias_relu(x, w, b, t))
                                   for name, tile in tiles.items()}, "device-events", trials=7, warmup=2)
        medians[shape] = {name: m.median for name, m in runs.items()}
        floors += [timing.scatter(m) for m in runs.values()]
    evidence(medians_ms={s: {t: round(v * 1e3, 3) for t, v in ts.items()} for s, ts in medians.items()})
    try:
        evidence(best=chip.assert_best_tile_differs(medians)["best"])
    except AssertionError:
        spread = min(max(ts.values()) / min(ts.values()) for ts in medians.values())
        timing.call_it(spread, 1.3, max(floors), {"medians": medians})
        raise
