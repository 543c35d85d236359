"""Course §14.3: the environment a result ran in, and whether it is one the result can be trusted in
(jaxlib within what jax accepts; the selected device the one asked for; a MAX and a Mojo that belong
together; a torch.compile that this Python supports, with its backend installed)."""

from __future__ import annotations


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


def max_mojo_environment() -> dict:
    """§14.3's "서로 호환되는 MAX·Mojo": the installed Mojo compiler, and the one MAX's engine was built
    against (max-core's pinned requirement on mojo-compiler)."""
    import importlib.metadata as metadata
    import re

    pinned = [r for r in metadata.requires("max-core") or [] if r.startswith("mojo-compiler")]
    wanted = re.search(r"==\s*([\w.]+)", pinned[0]).group(1) if pinned else None
    return {"max": metadata.version("max-core"), "mojo_compiler": metadata.version("mojo-compiler"), "wanted": wanted}


def max_mojo_problems(found: dict) -> list[str]:
    if found["wanted"] is None:
        return [f"max-core {found['max']} names no mojo-compiler it was built against"]
    if found["wanted"] != found["mojo_compiler"]:
        return [f"max-core {found['max']} wants mojo-compiler {found['wanted']}, installed is {found['mojo_compiler']}"]
    return []


def torch_compile_environment() -> dict:
    """§14.3's "Python 버전 지원, backend 설치" for torch.compile."""
    import sys

    import torch

    return {
        "torch": str(torch.__version__),
        "python": ".".join(map(str, sys.version_info[:3])),
        "dynamo_supported": torch._dynamo.is_dynamo_supported(),
        "backends": sorted(torch._dynamo.list_backends()),
    }


def torch_compile_problems(found: dict) -> list[str]:
    problems = []
    if not found["dynamo_supported"]:
        problems.append(f"torch {found['torch']} does not support Dynamo on Python {found['python']}")
    if "inductor" not in found["backends"]:
        problems.append(f"torch.compile's default backend inductor is not installed: {found['backends']}")
    return problems
