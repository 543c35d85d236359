"""What a chip says about itself (course §7): a GPU's SMs, lanes and memory levels from its device
properties, a TPU's kind, cores and HBM from JAX, and what attention's peak memory says about
FlashAttention (§3.1). Each reader returns plain numbers for evidence."""

from __future__ import annotations

# FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, arithmetic instructions)
LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128}


def gpu_levels(props) -> dict[str, int]:
    """A torch CUDA device's memory levels in bytes, nearest first: registers and shared memory of
    one SM, then the L2 and HBM the SMs share."""
    return {
        "registers_per_sm": props.regs_per_multiprocessor * 4,
        "shared_memory_per_sm": props.shared_memory_per_multiprocessor,
        "l2": props.L2_cache_size,
        "hbm": props.total_memory,
    }


def fp32_lanes(props) -> int:
    return props.multi_processor_count * LANES_PER_SM.get((props.major, props.minor), 128)


def tpu_facts(device) -> dict:
    """A JAX device's kind, its TensorCore index on the chip and its HBM, asserting it is a TPU:
    a TPU chip's "TensorCore" is a whole core (MXU, VPU, VMEM), not NVIDIA's matrix unit (§7.4)."""
    kind = getattr(device, "device_kind", "")
    assert device.platform == "tpu" and "TPU" in kind.upper(), f"not a TPU: platform {device.platform}, kind {kind!r}"
    stats = device.memory_stats() or {}
    facts = {"kind": kind, "core_on_chip": getattr(device, "core_on_chip", None), "hbm_bytes": stats.get("bytes_limit")}
    assert facts["core_on_chip"] is not None and (facts["hbm_bytes"] or 0) > 0, f"TPU facts incomplete: {facts}"
    return facts


def assert_flash_saves(flash_peak: int, math_peak: int, scores: int) -> dict:
    """§3.1: the math backend's peak holds the score matrix (>= 90 % of it); flash's stays under 5 % of it."""
    found = {"scores_bytes": scores, "math_peak": math_peak, "flash_peak": flash_peak}
    assert math_peak >= 0.9 * scores, f"the math backend should materialize the scores: {found}"
    assert flash_peak <= 0.05 * scores, f"the flash backend should not: {found}"
    return found


def assert_bf16_pays_where_units_are(
    speedup: float, matrix_units: bool, fast_at_least: float = 3.0, slow_at_most: float = 2.0
) -> None:
    """§12.5: which dtype is fast depends on the device. bf16's speed-up over fp32 on one matmul
    (fp32 time / bf16 time) is at least ``fast_at_least`` where bf16 units run it (a GPU's tensor
    cores; a CPU's AMX tiles or AVX512-BF16 dot products) and at most the 2x of half the bytes where
    there are none."""
    if matrix_units:
        assert speedup >= fast_at_least, (
            f"bf16 on bf16 matrix units should be >= {fast_at_least}x faster than fp32: {speedup:.2f}x"
        )
    else:
        assert speedup <= slow_at_most, (
            f"with no bf16 matrix units, bf16 should not be much faster than fp32 (<= {slow_at_most}x): {speedup:.2f}x"
        )


def assert_best_tile_differs(medians: dict[str, dict[str, float]], margin: float = 1.3) -> dict:
    """§12.5: ``medians[shape][tile]`` in seconds. Each shape's fastest tile beats the other shape's
    fastest tile, on this shape, by ``margin``: no one tile is best for every shape."""
    best = {shape: min(times, key=times.get) for shape, times in medians.items()}
    found = {
        "best": best,
        "medians_ms": {s: {t: round(v * 1e3, 3) for t, v in times.items()} for s, times in medians.items()},
    }
    for shape, times in medians.items():
        for other in set(best.values()) - {best[shape]}:
            assert times[other] >= margin * times[best[shape]], (
                f"on {shape}, tile {other} is within {margin}x of the best, {best[shape]}: {found}"
            )
    assert len(set(best.values())) > 1, f"one tile is fastest for every shape: {found}"
    return found
