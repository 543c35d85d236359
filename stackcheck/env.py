"""What this machine has: stacks, devices, and the reproducibility fingerprint of course §14.4.

Nothing here knows about pytest's session. A missing stack or device raises ``Missing`` (a
pytest skip); the plugin turns it into a failure when the run was started with ``--require``.
"""

from __future__ import annotations

import datetime
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import platform

import pytest

from stackcheck import gpus, repro
from stackcheck.stacks import DEVICES, STACKS
from stackcheck.tools import tool_path

__all__ = ["DEVICES", "TOOLS", "Missing", "device_missing", "fingerprint", "need", "stack_missing"]

TOOLS = ("ncu",)  # command-line tools a test may need besides a stack: --require accepts them too


class Missing(pytest.skip.Exception):
    """A skip for lack of ``needed`` (a stack, a device or a tool); a failure under ``--require needed``."""

    def __init__(self, reason: str, needed: str):
        super().__init__(reason)
        self.needed = needed


def install_hint(stack: str) -> str:
    return STACKS[stack].install_hint()


@functools.cache
def stack_missing(stack: str) -> str | None:
    """Why ``stack`` cannot run here (None when it can). Never raises."""
    record = STACKS[stack]
    for name in (stack, *record.uses):
        try:
            found = importlib.util.find_spec(STACKS[name].module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"{name} is not installed ({install_hint(name)})"
    if record.executable and tool_path(record.executable) is None:
        return f"the {record.executable} command is not on PATH ({install_hint(stack)})"
    return None


@functools.cache
def device_missing(device: str, stack: str | None = None) -> str | None:
    """Why ``device`` cannot be used by ``stack`` (default: torch for cuda, jax for tpu); None when it can."""
    if device == "cpu":
        return None
    stack = stack or ("jax" if device == "tpu" else "torch")
    missing = stack_missing(stack)
    if missing:
        return f"no {device} for {stack}: {missing}"
    record = STACKS[stack]
    if device not in record.devices or record.device_missing is None:
        return f"stackcheck's {stack} path does not run on {device}"
    return record.device_missing(device)


def need(stack: str):
    """Import and return a stack's module, or raise ``Missing`` saying how to install it."""
    reason = stack_missing(stack)
    if reason:
        raise Missing(reason, stack)
    return importlib.import_module(STACKS[stack].module)


def framework_defaults(environ=os.environ) -> None:
    """Settings for the frameworks, made before any of them starts a backend (the user's win):

    - torch and JAX share one GPU, so JAX must not preallocate most of its memory;
    - XLA's GPU GEMM autotuning is off: it costs seconds per new matmul shape, and the suite
      compiles dozens (every drawn shape of a property test). Claims are about what is compiled
      and how it runs, not XLA's tuned peak; XLA_FLAGS naming the option keeps the user's choice.
    """
    environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    flags = environ.get("XLA_FLAGS", "")
    if "xla_gpu_autotune_level" not in flags:
        environ["XLA_FLAGS"] = f"{flags} --xla_gpu_autotune_level=0".strip()


# ---- the §14.4 fingerprint ------------------------------------------------------------------


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
    rows = gpus.query("name", "driver_version")
    if not rows:
        return None
    names = sorted({name for name, _ in rows})
    return f"{len(rows)} x {', '.join(names)}", rows[0][1]


def fingerprint(pinned_precision, frameworks: bool = True) -> dict:
    """The reproducibility fields of course §14.4, read off this machine.

    ``pinned_precision`` is the context manager the tests run under; the precision is read inside
    it, so the fingerprint records what the tests ran with, not the frameworks' defaults. With
    ``frameworks`` False (the xdist controller) no framework backend is started: JAX's would open
    a client on every visible GPU, GPUs that only the workers may use; the workers report theirs."""
    gpu = _nvidia_smi()
    dists = dict.fromkeys(["numpy", *(s.dist for s in STACKS.values()), "jaxlib", "pytest", "hypothesis"])
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "os": platform.platform(),
        "cpu": _cpu_name(),
        "accelerator": gpu[0] if gpu else "none (no nvidia-smi)",
        "driver": gpu[1] if gpu else "n/a",
        "python": platform.python_version(),
        "versions": {dist: _version(dist) for dist in dists},
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "unset"),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "backends": {},
        "code_revision": repro.code_revision(),
    }
    torch = None if stack_missing("torch") else importlib.import_module("torch")
    jax = None if stack_missing("jax") else importlib.import_module("jax")
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
        f"  backends: {env['backends'] or 'none'} | precision (as tests run): {env['precision']}",
        f"  code: {env['code_revision']}",
    ]


# ---- §14.3: the environment a result ran in -----------------------------------------------------


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def jax_environment() -> dict:
    """What §14.3 says to check for JAX: its and jaxlib's versions, the range jax accepts, and the
    device it actually selected."""
    import jax
    import jaxlib

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "minimum_jaxlib": getattr(jax.version, "_minimum_jaxlib_version", "0"),
        "default_backend": jax.default_backend(),
        "first_device": jax.devices()[0].platform,
    }


def environment_problems(found: dict, required: set[str]) -> list[str]:
    """§14.3's checks: jaxlib within what this jax accepts, and the selected device the one asked for
    (``required``: the devices of --require)."""
    problems = []
    jaxlib = _version_tuple(found["jaxlib"])
    if not _version_tuple(found["minimum_jaxlib"]) <= jaxlib <= _version_tuple(found["jax"]):
        problems.append(
            f"jaxlib {found['jaxlib']} is outside what jax {found['jax']} accepts "
            f"({found['minimum_jaxlib']} to {found['jax']})"
        )
    if found["default_backend"] != found["first_device"]:
        problems.append(
            f"jax's default backend {found['default_backend']} is not its first device's "
            f"platform {found['first_device']}"
        )
    for device in sorted(required & {"cuda", "tpu"}):
        if found["default_backend"] != {"cuda": "gpu"}.get(device, device):
            problems.append(f"--require {device}, but jax selected {found['default_backend']}")
    return problems
