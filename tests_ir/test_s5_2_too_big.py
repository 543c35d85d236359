"""§5.2: too large a fusion can lose. Two layers fused into one program, ReLU(X @ W1 + b1) @ W2,
hold their hidden activation in registers: as the hidden width H grows, ptxas (Triton's own, for
sm_90, on any machine) runs out of registers and spills, and on the GPU the spilling fusion runs
several times slower than the unfused pair of library matmuls, against about as fast while it fits
(stackcheck.toolchains.fused_mlp; recorded in per_gpu.FUSION_LOSES)."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, judged, per_gpu, timing
from stackcheck.evidence.numerics import assert_matches_reference, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

WIDTHS = (64, 128, 256, 512)  # grown until ptxas spills: 64 fits on sm_90 (Triton 3.6 to 3.9), 128 spills
GPU_FITS, GPU_SPILLS = 64, 256  # H200, Triton 3.6: 0 and 22 KB of spill stores a thread
ROWS = 1 << 16


def checked(fm, h: int, device: str) -> None:
    """The fused program at width ``h`` computes the pair's numbers (float64 reference)."""
    torch = need("torch")
    x = torch.from_numpy(uniform((300, fm.K), seed=h)).to(device)
    w1, b1, w2 = fm.weights(h, device, seed=h + 1)
    expected = fm.unfused(*(t.double() for t in (x, w1, b1, w2)))
    assert_matches_reference(fm.fused(x, w1, b1, w2), expected, dtype="float32", k=h, what=f"the fused pair at H = {h}")


@pytest.mark.claim("S5.2-too-big")
@pytest.mark.triton
@pytest.mark.checks("that the grown fusion spills (the cause), not that it loses to the unfused pair")
def test_a_growing_fusion_spills(evidence):
    from stackcheck.toolchains import fused_mlp as fm
    from stackcheck.toolchains.triton_kernels import ptxas_usage

    usage = {}
    for h in WIDTHS:  # grow the fusion until it spills
        usage[h] = ptxas_usage(fm.compiled_sm90(h))
        if usage[h]["spill_stores"]:
            break
    evidence(registers_and_spills_by_width=usage, **judges.assert_fusion_spills_as_it_grows(usage))
    for h in usage:  # each compiled width computes the same numbers (Triton's interpreter)
        checked(fm, h, "cpu")


@pytest.mark.claim("S5.2-too-big")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.gpu_needs(line=per_gpu.fusion_loses_line)
def test_the_spilling_fusion_loses_to_the_unfused_pair_on_the_gpu(device, evidence):
    torch = need("torch")
    from triton.runtime.errors import OutOfResources

    from stackcheck.toolchains import fused_mlp as fm

    x = torch.from_numpy(uniform((ROWS, fm.K), seed=52)).to(device)
    timers, layers = {}, {}
    for h in (GPU_FITS, GPU_SPILLS):
        try:
            checked(fm, h, device)
        except OutOfResources as refused:  # a T4's 64 KB a block: the tile of H
            pytest.skip(
                f"this GPU cannot hold the fused pair's tiles at H = {h} in one block's shared memory: {refused}"
            )
        layers[h] = fm.weights(h, device, seed=h)
        timers[f"fused_{h}"] = timing.cuda_event_timer(lambda w=layers[h]: fm.fused(x, *w))
        timers[f"unfused_{h}"] = timing.cuda_event_timer(lambda w=layers[h]: fm.unfused(x, *w))
    runs = timing.interleaved(timers, "device-events", trials=9, warmup=2)
    loses, wins = (timing.ratio(runs[f"fused_{h}"], runs[f"unfused_{h}"]) for h in (GPU_SPILLS, GPU_FITS))
    found = {
        f"fused_over_unfused_at_{GPU_SPILLS}": round(loses, 2),
        f"fused_over_unfused_at_{GPU_FITS}": round(wins, 2),
        **{n: m.summary() for n, m in runs.items()},
    }
    line = per_gpu.fusion_loses_line(device_profile.current())
    if line is None:
        device_profile.no_line(device_profile.current(), found)
    evidence(
        **found,
        judged=[
            judged.line("fused_over_unfused", loses, at_least=line, of=(f"fused_{GPU_SPILLS}", f"unfused_{GPU_SPILLS}"))
        ],
    )
    floor = max(timing.scatter(runs[f"fused_{GPU_SPILLS}"]), timing.scatter(runs[f"unfused_{GPU_SPILLS}"]))
    if loses < line:
        timing.call_it(loses, line, floor, found)
    judges.assert_grown_fusion_loses(loses, line)
