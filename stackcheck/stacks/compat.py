"""Course §14.3: the environment a result ran in, and whether it is one the result can be trusted in
(jaxlib within what jax accepts; the selected device the one asked for)."""

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
