"""What this machine has: stacks, devices, and the reproducibility fingerprint of §14.4."""
from __future__ import annotations

import datetime
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import subprocess
import sys


DEVICES = ("cpu", "cuda", "tpu")

# stack marker -> (module to import, pip extra that installs it, distribution for its version)
STACKS = {
    "numpy": ("numpy", None, "numpy"),
    "torch": ("torch", "torch", "torch"),
    "jax": ("jax", "jax", "jax"),
    "triton": ("triton", "triton", "triton"),
    "max": ("max.graph", "max", "max"),
    "mojo": ("max.graph", "mojo", "mojo"),
}


def install_hint(stack: str) -> str:
    extra = STACKS[stack][1]
    if extra is None:
        return "pip install numpy"
    return f"pip install 'stackcheck[{extra}]'"


@functools.cache
def stack_missing(stack: str) -> str | None:
    """Why ``stack`` cannot run here (None when it can). Never raises."""
    module, _, _ = STACKS[stack]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return f"{stack} is not installed ({install_hint(stack)})"
    if stack == "mojo" and shutil.which("mojo") is None and _mojo_from_package() is None:
        return f"the mojo compiler is not on PATH ({install_hint('mojo')})"
    return None


def _mojo_from_package() -> str | None:
    candidate = os.path.join(os.path.dirname(sys.executable), "mojo")
    return candidate if os.path.exists(candidate) else None


def mojo_executable() -> str | None:
    return shutil.which("mojo") or _mojo_from_package()


@functools.cache
def device_missing(device: str, stack: str | None = None) -> str | None:
    """Why ``device`` cannot be used by ``stack`` (default: torch for cuda, jax for tpu); None when it can."""
    if device == "cpu":
        return None
    stack = stack or ("jax" if device == "tpu" else "torch")
    missing = stack_missing(stack)
    if missing:
        return f"no {device} for {stack}: {missing}"
    if stack == "jax":
        import jax

        platform_name = jax_platform(device)
        try:
            if jax.devices(platform_name):
                return None
        except RuntimeError:
            pass
        return f"no {device} device visible to jax {jax.__version__} (jax.devices({platform_name!r}) is empty)"
    if stack in ("torch", "triton") and device == "cuda":
        import torch

        if torch.cuda.is_available():
            return None
        return f"no CUDA device visible to torch {torch.__version__} (CPU build or no GPU)"
    return f"stackcheck's {stack} path does not run on {device}"


def jax_platform(device: str) -> str:
    """JAX's platform name for one of our device names (JAX calls CUDA GPUs "gpu")."""
    return {"cuda": "gpu"}.get(device, device)


def jax_device(device: str):
    """The first JAX device of our device name ``device``."""
    import jax

    return jax.devices(jax_platform(device))[0]


def need(stack: str):
    """Import and return a stack's module, or skip (fail under --require) saying how to install it."""
    from stackcheck.plugin import skip_or_fail

    reason = stack_missing(stack)
    if reason:
        skip_or_fail(reason, stack)
    return importlib.import_module(STACKS[stack][0])


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
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
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout.strip().splitlines()
    except (subprocess.SubprocessError, OSError):
        return None
    if not out:
        return None
    names = sorted({line.split(",")[0].strip() for line in out})
    driver = out[0].split(",")[-1].strip()
    return f"{len(out)} x {', '.join(names)}", driver


def fingerprint() -> dict:
    """The reproducibility fields of course §14.4, read off this machine."""
    gpu = _nvidia_smi()
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "os": platform.platform(),
        "cpu": _cpu_name(),
        "accelerator": gpu[0] if gpu else "none (no nvidia-smi)",
        "driver": gpu[1] if gpu else "n/a",
        "python": platform.python_version(),
        "versions": {dist: _version(dist) for dist in
                     ("numpy", "torch", "jax", "jaxlib", "triton", "max", "mojo", "pytest", "hypothesis")},
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "unset"),
    }
    env["backends"] = {}
    env["precision"] = {}
    if not stack_missing("torch"):
        import torch

        env["backends"]["torch"] = "cuda" if torch.cuda.is_available() else "cpu"
        env["versions"]["torch_cuda"] = torch.version.cuda or "cpu build"
        env["precision"]["torch.backends.cuda.matmul.allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
        env["precision"]["torch.backends.cudnn.allow_tf32"] = torch.backends.cudnn.allow_tf32
        env["precision"]["torch.float32_matmul_precision"] = torch.get_float32_matmul_precision()
    if not stack_missing("jax"):
        import jax

        env["backends"]["jax"] = jax.default_backend()
        env["precision"]["jax_default_matmul_precision"] = str(jax.config.jax_default_matmul_precision)
    return env


def header_lines(env: dict) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v != "not installed")
    return [
        f"stackcheck environment (course §14.4): {env['date']} | {env['os']} | Python {env['python']}",
        f"  cpu: {env['cpu']} | accelerator: {env['accelerator']} | driver: {env['driver']}",
        f"  versions: {versions}",
        f"  backends: {env['backends'] or 'none'} | precision: {env['precision'] or 'n/a'}",
    ]
