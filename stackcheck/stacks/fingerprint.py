"""The reproducibility fingerprint of course §14.4: versions, devices, precision and code revision,
read off this machine, and the header lines the run prints."""

from __future__ import annotations

import datetime
import importlib
import importlib.metadata
import os
import platform
import sys

from stackcheck.evidence import gpus, repro
from stackcheck.stacks.records import STACKS

# The distribution that carries a stack when its own is absent: `pip install mojo` is a meta-package
# over mojo-compiler, and a machine given the compiler's wheel alone (the GPU job's staged wheels) ran
# Mojo while its reports said "mojo not installed".
_CARRIED_BY = {"mojo": "mojo-compiler"}


def _version(dist: str) -> str:
    for name in filter(None, (dist, _CARRIED_BY.get(dist))):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return "not installed"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} logical cores)"
    except OSError:
        pass
    return (platform.processor() or platform.machine()) + f" ({os.cpu_count()} logical cores)"


def _nvidia_smi() -> tuple[str, str] | None:
    rows = gpus.query("name", "driver_version")
    if not rows:
        return None
    names = sorted({name for name, _ in rows})
    return f"{len(rows)} x {', '.join(names)}", rows[0][1]


def accelerator() -> str:
    """This machine's GPUs as a report's environment names them ("1 x NVIDIA H200")."""
    gpu = _nvidia_smi()
    return gpu[0] if gpu else NO_ACCELERATOR


NO_ACCELERATOR = "none (no nvidia-smi)"
FRAMEWORKS = ("torch", "jax")


def fingerprint(pinned_precision, frameworks: bool = True) -> dict:
    """The reproducibility fields of course §14.4, read off this machine.

    torch and JAX are read where this process has loaded them, never imported to be read: a run
    whose tests use neither (a self-test's pytest, a NumPy homework) paid seconds for both, and a
    framework its tests never loaded ran nothing to record. ``with_frameworks`` adds those loaded
    later. ``pinned_precision`` is the context manager the tests run under; the precision is read
    inside it, so the fingerprint records what the tests ran with, not the frameworks' defaults. With
    ``frameworks`` False (the xdist controller) no framework backend is started: JAX's would open
    a client on every visible GPU, GPUs that only the workers may use; the workers report theirs."""
    gpu = _nvidia_smi()
    dists = dict.fromkeys(["numpy", *(s.dist for s in STACKS.values()), "jaxlib", "pytest", "hypothesis"])
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "os": platform.platform(),
        "cpu": _cpu_name(),
        "accelerator": gpu[0] if gpu else NO_ACCELERATOR,
        "driver": gpu[1] if gpu else "n/a",
        "python": platform.python_version(),
        "versions": {dist: _version(dist) for dist in dists},
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "unset"),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "backends": {},
        "code_revision": repro.code_revision(),
    }
    return with_frameworks(env, pinned_precision, frameworks)


def loaded() -> tuple[str, ...]:
    """The frameworks of FRAMEWORKS this process has imported."""
    return tuple(name for name in FRAMEWORKS if name in sys.modules)


def with_frameworks(env: dict, pinned_precision, frameworks: bool = True) -> dict:
    """``env`` with torch's CUDA build, and the backend and precision of each framework this process
    has loaded (its backend only with ``frameworks``). An import another thread has begun is waited for."""
    torch, jax = (importlib.import_module(name) if name in sys.modules else None for name in FRAMEWORKS)
    env = {**env, "versions": dict(env["versions"]), "backends": {}}
    if torch is not None:
        env["versions"]["torch_cuda"] = torch.version.cuda or "cpu build"
        if frameworks:  # is_available() asks the driver; it creates no CUDA context
            env["backends"]["torch"] = "cuda" if torch.cuda.is_available() else "cpu"
    if jax is not None and frameworks:
        env["backends"]["jax"] = jax.default_backend()
    if not frameworks:
        env["backends"] = "per worker (see workers)"
    with pinned_precision(torch, jax) as settings:
        env["precision"] = settings() or "n/a"
    return env


def header_lines(env: dict) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v != "not installed")
    return [
        f"stackcheck environment (course §14.4): {env['date']} | {env['os']} | Python {env['python']}",
        f"  cpu: {env['cpu']} | accelerator: {env['accelerator']} | driver: {env['driver']}",
        f"  versions: {versions}",
        f"  backends: {env['backends'] or 'none loaded yet'} | precision (as tests run): {env['precision']}",
        f"  code: {env['code_revision']}",
    ]
