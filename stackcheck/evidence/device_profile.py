"""The GPU a run has, as the suite needs to know it (course §7, §12.5): what differs by GPU comes
from here, never from one card's numbers written into a test.

A ``Profile`` holds what the driver reports (name, compute capability, SMs, L2, shared memory a block
may opt into, memory) and, from a small table by compute capability, what cannot be queried: the
dtypes its tensor cores take, its memory kind. Tests read it for

- gates: ``lacks(need)`` says why a claim cannot be shown on this GPU (a skip, never a failure);
- sizes: ``budget_bytes`` (a worker's share of memory) and ``l2_bytes`` decide a workload's size;
- lines: ``line(table)`` picks a timing or counter line set for this architecture family, or None
  ("measured, no line for sm_XX": the test reports and does not count as verified).

``current()`` asks the driver once per process (in a subprocess, so the test process makes no CUDA
context before it forks), or returns a recorded profile when ``STACKCHECK_GPU_PROFILE`` names one
(``fixtures/gpu_profiles.toml``: a T4, an L4, an A100, an RTX 4090, an 8 GB laptop GPU, the H200).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass

from stackcheck.evidence import gpus, hardware
from stackcheck.paths import data

ENV = "STACKCHECK_GPU_PROFILE"
GIB = 2**30
ANY_GPU = "any GPU"  # a line table's key for a line that holds on every GPU (Profile.family_keys)


@dataclass(frozen=True)
class Arch:
    """What an architecture's compute capability fixes and the driver does not report."""

    family: str
    tensor_dtypes: tuple[str, ...]  # what its tensor cores multiply (tfloat32: fp32 inputs in TF32)
    memory: str  # the usual memory kind of its cards (§7.2: "모든 GPU가 HBM을 사용하는 것은 아니다")


_AMPERE = ("float16", "bfloat16", "tfloat32")
# CUDA C++ Programming Guide (arithmetic instructions, tensor cores) and the vendors' data sheets.
ARCHS = {
    (7, 0): Arch("Volta", ("float16",), "HBM2"),
    (7, 5): Arch("Turing", ("float16",), "GDDR6"),
    (8, 0): Arch("Ampere", _AMPERE, "HBM2e"),
    (8, 6): Arch("Ampere", _AMPERE, "GDDR6"),
    (8, 7): Arch("Ampere (Orin)", _AMPERE, "LPDDR5"),
    (8, 9): Arch("Ada", (*_AMPERE, "float8"), "GDDR6"),
    (9, 0): Arch("Hopper", (*_AMPERE, "float8"), "HBM3"),
    (10, 0): Arch("Blackwell", (*_AMPERE, "float8"), "HBM3e"),
    (12, 0): Arch("Blackwell (GeForce)", (*_AMPERE, "float8"), "GDDR7"),
}


@dataclass(frozen=True)
class Need:
    """Something a claim needs from the GPU: ``has(profile)`` and the words for when it is missing."""

    text: str
    has: object  # Callable[[Profile], bool]


NEEDS = {
    "bf16-tensor-cores": Need("bf16 tensor cores (sm_80+)", lambda p: "bfloat16" in p.arch.tensor_dtypes),
    "tf32": Need("TF32 tensor cores (sm_80+)", lambda p: "tfloat32" in p.arch.tensor_dtypes),
    "flash-attention": Need("flash attention (PyTorch's FLASH backend needs sm_80+)", lambda p: p.capability >= (8, 0)),
    # torch._inductor.utils.is_big_gpu: max-autotune's GEMM templates need 68 SMs
    "gemm-templates": Need(
        "Inductor's Triton GEMM templates (sm_80+ with at least 68 SMs)",
        lambda p: p.capability >= (8, 0) and p.sms >= 68,
    ),
    "triton-bf16": Need("bf16 in Triton kernels (sm_80+)", lambda p: p.capability >= (8, 0)),
    # §7.2: the memory bus the driver reports, or where it reports none the architecture's usual memory
    "memory-without-hbm": Need(
        "memory other than HBM (GDDR, LPDDR or the host's)",
        lambda p: (
            hardware.memory_kind(p.memory_bus_bits, p.integrated) != "HBM"
            if p.memory_bus_bits or p.integrated
            else not p.arch.memory.startswith("HBM")
        ),
    ),
}


COUNTERS_ASKED = "asked of ncu when a test needs them"
CONTEXT_RESERVE = 1 * GIB  # a worker's CUDA contexts (torch, JAX, MAX) and JAX's arrays of the session
NCU_RESERVE = 2 * GIB  # the child ncu replays a workload in, beside the workers


@dataclass(frozen=True)
class Profile:
    name: str
    capability: tuple[int, int]
    sms: int
    l2_bytes: int
    shared_per_block_optin: int
    memory_bytes: int
    clock_khz: int  # the SMs' highest clock, as the driver reports it (CU_DEVICE_ATTRIBUTE_CLOCK_RATE; 0: unknown)
    source: str = "this machine"
    # whether ncu may read this GPU's counters: "permitted (...)", "refused (...)" (ERR_NVGPUCTRPERM: a
    # hosted notebook or a machine whose administrator has not granted it), or asked when run
    counters: str = COUNTERS_ASKED
    # memory free when the driver was asked (a display, another process take the rest); 0: not asked
    # (a recorded profile), the whole memory counts
    free_bytes: int = 0
    memory_bus_bits: int = 0  # the memory bus's width (CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH); 0: unknown
    integrated: bool = False  # an integrated GPU, using the host's memory (CU_DEVICE_ATTRIBUTE_INTEGRATED)

    @property
    def sm(self) -> str:
        return f"sm_{self.capability[0]}{self.capability[1]}"

    @property
    def arch(self) -> Arch:
        """The table's row for this capability, or for the newest one below it (a newer card keeps
        what its predecessors had)."""
        known = [c for c in ARCHS if c <= self.capability] or [min(ARCHS)]
        return ARCHS[max(known)]

    @property
    def fp32_flops(self) -> float:
        """Peak float32 FMA rate off the tensor cores: SMs x FP32 lanes x 2 x clock (§7)."""
        return self.sms * hardware.LANES_PER_SM.get(self.capability, 128) * 2 * self.clock_khz * 1e3

    @property
    def counters_refused(self) -> bool:
        return self.counters.startswith("refused")

    @property
    def geforce(self) -> bool:
        """A consumer card: its tensor cores accumulate fp32 at half rate (about 2x fp32, not 8-16x)."""
        return "geforce" in self.name.lower() or "titan" in self.name.lower()

    @property
    def workers(self) -> int:
        """pytest-xdist workers this GPU takes under ``-n auto``: one per 8 GiB, 1 to 4 (the
        workloads reach GiBs; past 4 a GPU, the first compiles and imports dominate)."""
        return max(1, min(gpus.WORKERS_PER_GPU, self.memory_bytes // (8 * GIB)))

    @property
    def budget_bytes(self) -> int:
        """What one test may allocate: a worker's share of the memory free when the driver was asked,
        less what runs beside the test: each worker's torch and JAX contexts and caches, and the
        child ncu profiles a workload in; a tenth left for fragmentation. The share is of the workers
        ``-n auto`` would start, or of those this run started on the GPU where they are more (``-n 8``)."""
        free = self.free_bytes or self.memory_bytes
        sharing = max(self.workers, gpus.sharing_its_gpu())
        left = free - sharing * CONTEXT_RESERVE - NCU_RESERVE
        return max(0, int(left * 0.9 / sharing))

    def missing(self, *needs: str) -> list[str]:
        """The words for each of ``needs`` this GPU does not have."""
        unknown = [n for n in needs if n not in NEEDS]
        if unknown:
            raise ValueError(f"unknown GPU need(s) {unknown}; known: {sorted(NEEDS)}")
        return [NEEDS[n].text for n in needs if not NEEDS[n].has(self)]

    def lacks(self, *needs: str) -> str | None:
        """Why this GPU cannot show what needs ``needs`` (None when it can)."""
        missing = self.missing(*needs)
        return f"needs {' and '.join(missing)}; this is {self.sm} ({self.name})" if missing else None

    @property
    def family(self) -> str:
        """The architecture family a line set from published figures is keyed by: "sm_89-geforce", "sm_90"."""
        return f"{self.sm}-geforce" if self.geforce else self.sm

    def family_keys(self) -> tuple[str, ...]:
        """The keys a line table may use for this GPU, most specific first: the card's own name (a line
        recorded on that card only), its family, its compute capability, and ANY_GPU (a line that
        follows from the statement itself, a count's or a same-run ratio's, and holds on every GPU)."""
        return tuple(dict.fromkeys((self.name, self.family, self.sm, ANY_GPU)))

    def line(self, table: dict[str, object]) -> object | None:
        """This GPU's line from ``table`` (keyed "NVIDIA H200", "sm_89-geforce", "sm_90", ...), None without one."""
        return next((table[k] for k in self.family_keys() if k in table), None)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "arch": f"{self.sm} {self.arch.family}",
            "sms": self.sms,
            "l2_mib": round(self.l2_bytes / 2**20, 1),
            "memory_gib": round(self.memory_bytes / GIB, 1),
            "free_gib": round(self.free_bytes / GIB, 1) if self.free_bytes else "not asked",
            "memory_kind": self.arch.memory,
            "clock_mhz": round(self.clock_khz / 1000),
            "counters": self.counters,
            "tensor_dtypes": list(self.arch.tensor_dtypes),
            "workers": self.workers,
            "source": self.source,
        }


def release_cached_memory() -> None:
    """Give torch's cached GPU blocks back before a cuda test, whose workload is sized from the memory
    free (Profile.budget_bytes): what an earlier test of this worker cached is free again."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def no_line(profile: Profile, measured: dict) -> None:
    """Report a measurement that has no line on this GPU: a skip with the numbers, never a pass."""
    import pytest

    pytest.skip(f"measured, no line for {profile.family} ({profile.name}): {measured}")


def _from_row(row: dict) -> Profile:
    """A profile from a TOML or JSON row, whose capability is a list."""
    return Profile(**{**row, "capability": tuple(row["capability"])})


@functools.cache
def recorded() -> dict[str, Profile]:
    """The profiles of fixtures/gpu_profiles.toml, by key."""
    with open(data.path("fixtures", "gpu_profiles.toml"), "rb") as f:
        table = tomllib.load(f)
    return {key: _from_row(row) for key, row in table.items()}


# Asks the driver (CUDA's driver API through ctypes) in a child process: no CUDA context in ours.
_PROBE = """
import ctypes, json
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
dev = ctypes.c_int()
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
def attr(code, needed=True):
    value = ctypes.c_int()
    done = cuda.cuDeviceGetAttribute(ctypes.byref(value), code, dev)
    assert done == 0 or not needed
    return value.value if done == 0 else 0
name, memory = ctypes.create_string_buffer(256), ctypes.c_size_t()
cuda.cuDeviceGetName(name, 256, dev)
cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), dev)
context, free, total = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
asked = cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), dev) == 0 and cuda.cuCtxSetCurrent(context) == 0
asked = asked and cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
print(json.dumps({"name": name.value.decode(), "capability": [attr(75), attr(76)], "sms": attr(16),
                  "l2_bytes": attr(38), "shared_per_block_optin": attr(97), "memory_bytes": memory.value,
                  "clock_khz": attr(13, needed=False), "free_bytes": free.value if asked else 0,
                  "memory_bus_bits": attr(37, needed=False), "integrated": bool(attr(18, needed=False))}))
"""


def probe() -> Profile | None:
    """This process's first visible GPU, as its driver reports it; None without one."""
    if not gpus.visible_gpus():
        return None
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
        row = json.loads(done.stdout)
    except (subprocess.SubprocessError, OSError, ValueError):
        return None
    return _from_row(row)


_CURRENT: dict[str, Profile | None] = {}


def current() -> Profile | None:
    """The GPU this process runs on (its pinned CUDA_VISIBLE_DEVICES), or the recorded profile
    ``$STACKCHECK_GPU_PROFILE`` names; None without a GPU."""
    key = os.environ.get(ENV)
    if key:
        profiles = recorded()
        if key not in profiles:
            raise ValueError(f"{ENV}={key}: no such recorded profile; known: {', '.join(profiles)}")
        return profiles[key]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    if visible not in _CURRENT:
        _CURRENT[visible] = probe()
    return _CURRENT[visible]
