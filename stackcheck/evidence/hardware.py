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
