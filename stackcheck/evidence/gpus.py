"""One GPU per pytest-xdist worker: the controller lists the GPUs, each worker pins one."""

from __future__ import annotations

import os
import shutil
import subprocess

ENV_LIST = "STACKCHECK_GPUS"


def query(*fields: str) -> list[list[str]]:
    """One row per GPU of the host, the ``fields`` of ``nvidia-smi --query-gpu`` in order; [] when
    there is no nvidia-smi or it fails. It asks the driver and makes no CUDA context."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    return [[part.strip() for part in line.split(",", len(fields) - 1)] for line in out.splitlines() if line.strip()]


def visible_gpus(environ=os.environ) -> list[str]:
    """The GPU ids this process may use: CUDA_VISIBLE_DEVICES if set, else every GPU nvidia-smi lists."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        return [g.strip() for g in environ["CUDA_VISIBLE_DEVICES"].split(",") if g.strip() and g.strip() != "-1"]
    return [index for (index,) in query("index")]


def gpu_for_worker(worker: str, gpus: list[str]) -> str | None:
    """gw0 -> gpus[0], gw1 -> gpus[1], ...; workers share round-robin when there are more workers than GPUs."""
    if not gpus or not worker.startswith("gw"):
        return None
    return gpus[int(worker[2:]) % len(gpus)]


def pin(environ=os.environ) -> str | None:
    """Called in pytest_configure, before any framework touches CUDA. Returns the pinned GPU id.

    On the xdist controller (or without xdist) it records the visible GPUs for the workers;
    in a worker it narrows CUDA_VISIBLE_DEVICES to that worker's GPU, so torch and JAX both
    see exactly one device, and the CUDA tests run once each, on some GPU, not once per GPU.
    """
    worker = environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        environ.setdefault(ENV_LIST, ",".join(visible_gpus(environ)))
        return None
    gpus = [g for g in environ.get(ENV_LIST, "").split(",") if g]
    chosen = gpu_for_worker(worker, gpus)
    if chosen is not None:
        environ["CUDA_VISIBLE_DEVICES"] = chosen
    return chosen


def sharing_its_gpu(environ=os.environ) -> int:
    """How many xdist workers run on this process's GPU: the workers, round-robin over the GPUs the
    controller recorded; 1 without xdist or without a recorded GPU (the workers share none)."""
    gpus = [g for g in environ.get(ENV_LIST, "").split(",") if g]
    workers = int(environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return -(-workers // len(gpus)) if gpus else 1


def shares_its_gpu(environ=os.environ) -> bool:
    """Whether this xdist worker's GPU runs other workers' tests too (more workers than GPUs):
    their kernels land between this process's own."""
    return sharing_its_gpu(environ) > 1


WORKERS_PER_GPU = 4  # measured on H200s: past 4 workers a GPU, the first compiles and imports dominate


def auto_workers(cores: int | None, per_gpu: int = WORKERS_PER_GPU, environ=os.environ) -> int | None:
    """``-n auto`` where GPUs are visible: ``per_gpu`` workers a GPU (the device profile's, from its
    memory), at most one a core. The suite is host-bound (compiles, imports, small kernels), so a
    GPU serves several workers, but one worker a core, xdist's default, would start 16 CUDA
    contexts on a 16-core single-GPU host. None without a GPU: xdist's own count (the cores) stands."""
    visible = visible_gpus(environ)
    if not visible:
        return None
    return max(1, min(cores or 1, per_gpu * len(visible)))


def smi_rows() -> dict[str, dict[str, str]]:
    """nvidia-smi's physical index -> {pci_bus_id, name}, for every GPU of the host."""
    return {index: {"pci_bus_id": bus, "name": name} for index, bus, name in query("index", "pci.bus_id", "name")}


def describe(environ=os.environ) -> dict:
    """This process's GPUs as the report's environment lists them: its xdist worker, what it was
    pinned to, and each visible GPU's PCI bus id and name, read from nvidia-smi."""
    rows = smi_rows()
    visible = visible_gpus(environ)
    return {
        "worker": environ.get("PYTEST_XDIST_WORKER", "main"),
        "cuda_visible_devices": environ.get("CUDA_VISIBLE_DEVICES", "unset"),
        "gpus": [{"id": gpu, **rows.get(gpu, {})} for gpu in visible],
    }
