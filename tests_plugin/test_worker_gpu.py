"""One GPU per xdist worker, on a real GPU host: torch and JAX in this worker see exactly the GPU the
plugin pinned, identified by PCI bus id. Run it as `pytest -m cuda -n <GPUs>`; the report records
each worker's GPU."""

import os
import shutil

import pytest

from stackcheck.evidence import gpus
from stackcheck.evidence.gpus import ENV_LIST, gpu_for_worker
from stackcheck.stacks.available import need

pytestmark = [pytest.mark.meta, pytest.mark.cuda]


def bus_ids() -> dict[str, str]:
    """nvidia-smi's physical GPU index -> PCI bus id (all GPUs, whatever this process may see)."""
    return {index: row["pci_bus_id"].upper()[-12:] for index, row in gpus.smi_rows().items()}


def test_worker_sees_its_pinned_gpu_in_torch_and_jax(evidence):
    torch = need("torch")
    jax = need("jax")
    if not shutil.which("nvidia-smi"):
        pytest.skip("nvidia-smi is needed to name GPUs by PCI bus id")
    props = torch.cuda.get_device_properties(0)
    torch_bus = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"[-12:]
    gpus = jax.devices("gpu")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    record = {
        "worker": worker or "no xdist",
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "torch_device": torch.cuda.get_device_name(0),
        "torch_pci_bus": torch_bus,
        "torch_count": torch.cuda.device_count(),
        "jax_devices": [str(d) for d in gpus],
    }
    evidence(**record)
    if worker is None:
        return
    pinned = gpu_for_worker(worker, [g for g in os.environ.get(ENV_LIST, "").split(",") if g])
    assert torch.cuda.device_count() == 1 and len(gpus) == 1, f"a worker sees exactly one GPU: {record}"
    if pinned is not None and pinned.isdigit():
        assert torch_bus == bus_ids()[pinned], f"{worker} was pinned to GPU {pinned}, torch sees {record}"
