"""What a chip says about itself (course §7): a GPU's SMs, lanes and memory levels from its device
properties, and a TPU's kind, cores and HBM from JAX. Each reader returns plain numbers for evidence."""

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


HBM_BUS_BITS = 1024  # one HBM stack's interface; GDDR and LPDDR buses are 64 to 512 bits wide


def memory_kind(bus_bits: int, integrated: bool) -> str:
    """§7.2: what memory a GPU's driver describes: the host's (an integrated GPU), HBM stacks (a bus
    of 1024 bits or more), or GDDR / LPDDR chips beside the die."""
    return "host memory" if integrated else "HBM" if bus_bits >= HBM_BUS_BITS else "GDDR or LPDDR"


def assert_bus_describes_memory(bus_bits: int, clock_khz: int, copy_bytes_per_s: float, least: float = 0.3) -> dict:
    """§7.2: the memory a copy runs through is the one the driver describes: its measured bandwidth
    (bytes read and written per second, far over the L2) is at least ``least`` of the peak of that bus
    at that clock (two transfers a clock, as CUDA's bandwidthTest counts) and not over it."""
    peak = bus_bits / 8 * clock_khz * 1e3 * 2
    share = copy_bytes_per_s / peak
    found = {
        "bus_bits": bus_bits,
        "memory_clock_mhz": round(clock_khz / 1e3),
        "peak_gb_s": round(peak / 1e9),
        "copy_gb_s": round(copy_bytes_per_s / 1e9),
        "share_of_peak": round(share, 3),
    }
    assert least <= share <= 1.0, (
        f"a copy ran at {share:.2f} of the peak the driver's bus and clock give (expected {least} to 1): "
        f"the driver's description is not the memory it ran through, or the copy was not timed whole: {found}"
    )
    return found


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
