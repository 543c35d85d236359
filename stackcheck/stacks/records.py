"""The stacks of the course, one record each (OpInfo-style, keyword-built, checked as made): package,
install extra, devices and dtypes, the tolerance row of each device, and input conversion. How each
stack runs the steps and the forward of Y = ReLU(X @ W + b) is ``stackcheck.run.runners``.

Adding a stack means adding one ``Stack`` to ``STACKS``. Its name is also a pytest marker, and
``uses`` names the other stacks it needs (their markers apply too: ``-m torch`` selects the
``torch_compile`` and ``triton`` paths as well).
Pytest parameters drawn from these records are ``stackcheck.stacks.params``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from stackcheck.evidence.device_profile import NEEDS
from stackcheck.evidence.numerics import DTYPES, TOLERANCES

DEVICES = ("cpu", "cuda", "tpu")
# A tolerance row that holds only where the GPU has a feature: TF32 needs TF32 tensor cores (a T4 has none,
# and multiplies float32 in float32).
ROW_NEEDS = {"tfloat32": "tf32"}


def jax_platform(device: str) -> str:
    """JAX's platform name for one of our device names (JAX calls CUDA GPUs "gpu")."""
    return {"cuda": "gpu"}.get(device, device)


def jax_device(device: str):
    """The first JAX device of our device name ``device``."""
    import jax

    return jax.devices(jax_platform(device))[0]


def assert_dtype_kept(got, dtype: str) -> None:
    if str(got).removeprefix("torch.") != dtype:
        raise AssertionError(f"the result is {got}, but the inputs were {dtype}: the path changed the dtype")


def numpy_in(arrays, device: str, dtype: str):
    return [np.asarray(a, dtype=np.dtype(dtype)) for a in arrays]


def numpy_out(out, dtype: str) -> np.ndarray:
    assert_dtype_kept(np.asarray(out).dtype, dtype)
    return np.asarray(out, dtype=np.float64)


def torch_in(arrays, device: str, dtype: str):
    import torch

    return [torch.from_numpy(np.ascontiguousarray(a)).to(device=device, dtype=getattr(torch, dtype)) for a in arrays]


def torch_out(t, dtype: str) -> np.ndarray:
    import torch

    assert_dtype_kept(t.dtype, dtype)
    return t.detach().to("cpu", torch.float64).numpy()


def jax_in(arrays, device: str, dtype: str):
    import jax
    import jax.numpy as jnp

    target = jax_device(device)
    return [jax.device_put(jnp.asarray(a, dtype=getattr(jnp, dtype)), target) for a in arrays]


def jax_out(a, dtype: str) -> np.ndarray:
    assert_dtype_kept(a.dtype, dtype)
    return np.asarray(a.astype("float32"), dtype=np.float64)


def torch_device_missing(device: str) -> str | None:
    import torch

    if device == "cuda" and torch.cuda.is_available():
        return None
    return f"no CUDA device visible to torch {torch.__version__} (CPU build or no GPU)"


def jax_device_missing(device: str) -> str | None:
    import jax

    platform = jax_platform(device)
    try:
        if jax.devices(platform):
            return None
    except RuntimeError:
        pass
    return f"no {device} device visible to jax {jax.__version__} (jax.devices({platform!r}) is empty)"


def max_device_missing(device: str) -> str | None:
    from max import driver

    if device == "cuda" and driver.accelerator_count() > 0:
        return None
    return "MAX sees no GPU (max.driver.accelerator_count() == 0)"


@dataclass(frozen=True, kw_only=True)
class Stack:
    """One stack of the course, built by keyword and checked as it is made (OpInfo-style)."""

    name: str
    module: str  # imported to use the stack (its presence decides availability)
    extra: str | None  # pip extra of stackcheck that installs it
    dist: str  # distribution whose version the fingerprint records
    devices: dict[str, tuple[str, ...]]  # device -> dtypes this stack computes in there
    device_missing: Callable[[str], str | None] | None = None  # for devices other than cpu
    uses: tuple[str, ...] = ()  # other stacks this one needs
    executable: str | None = field(default=None)  # a command-line tool it needs, besides the module
    # device -> the tolerance row its float32 matmuls are held to, where the stack gives no full
    # float32 there (measured; see ``tolerance_row``); a row in ROW_NEEDS applies only on a GPU with
    # that feature (device_profile.NEEDS), the dtype's own row elsewhere
    float32_matmul: dict[str, str] = field(default_factory=dict)
    # dtype -> what its cuda runs need from the GPU (device_profile.NEEDS): stack_params marks those
    # parameters gpu_needs, so a GPU without it skips them with the reason
    cuda_needs: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = [f"device {d!r} is not one of {DEVICES}" for d in self.devices if d not in DEVICES]
        problems += [
            f"{d}: dtype {t!r} is not one of {DTYPES}" for d, ts in self.devices.items() for t in ts if t not in DTYPES
        ]
        problems += [
            f"{d} runs somewhere other than the CPU but device_missing is None"
            for d in self.devices
            if d != "cpu" and self.device_missing is None
        ]
        problems += [
            f"float32_matmul names {d!r}, where the stack does not run"
            for d in self.float32_matmul
            if d not in self.devices
        ]
        problems += [
            f"float32_matmul row {r!r} on {d!r} needs a GPU feature, but {d!r} is not a GPU"
            for d, r in self.float32_matmul.items()
            if r in ROW_NEEDS and d != "cuda"
        ]
        problems += [
            f"float32_matmul row {r!r} is not in TOLERANCES"
            for r in self.float32_matmul.values()
            if r not in TOLERANCES
        ]
        problems += [
            f"cuda_needs: {t!r} is not a cuda dtype of the stack, or {ns} not among {sorted(NEEDS)}"
            for t, ns in self.cuda_needs.items()
            if t not in self.devices.get("cuda", ()) or not set(ns) <= set(NEEDS)
        ]
        if self.name in self.uses:
            problems.append("a stack cannot use itself")
        if problems:
            raise ValueError(f"Stack {self.name!r}: " + "; ".join(problems))

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.name, *self.uses)

    def install_hint(self) -> str:
        return f"pip install 'stackcheck[{self.extra}]'" if self.extra else f"pip install {self.dist}"


STACKS = {
    s.name: s
    for s in (
        Stack(
            name="numpy",
            module="numpy",
            extra=None,
            dist="numpy",
            devices={"cpu": ("float32", "float16")},
        ),
        Stack(
            name="torch",
            module="torch",
            extra="torch",
            dist="torch",
            devices={"cpu": DTYPES, "cuda": DTYPES},
            device_missing=torch_device_missing,
        ),
        Stack(
            name="torch_compile",
            module="torch",
            extra="torch",
            dist="torch",
            devices={"cpu": DTYPES, "cuda": DTYPES},
            device_missing=torch_device_missing,
            uses=("torch",),
            cuda_needs={"bfloat16": ("triton-bf16",)},  # Inductor writes Triton kernels for the GPU
        ),
        Stack(
            name="jax",
            module="jax",
            extra="jax",
            dist="jax",
            devices={"cpu": DTYPES, "cuda": DTYPES, "tpu": DTYPES},
            device_missing=jax_device_missing,
        ),
        # MAX 26.7 multiplies float32 matrices on a GPU's tensor cores in TF32 (inputs rounded to 10
        # mantissa bits) and has no setting for full float32: measured on the H200 by
        # tests_runtime/test_s10_3_gpu.py, and said in MAX's own source (its minimax_music3 conv layer).
        Stack(
            name="max",
            module="max.graph",
            extra="max",
            dist="max",
            devices={"cpu": DTYPES, "cuda": DTYPES},
            device_missing=max_device_missing,
            float32_matmul={"cuda": "tfloat32"},
        ),
        # The Triton interpreter has no bfloat16 (NumPy has none); compiled CUDA has all three.
        Stack(
            name="triton",
            module="triton",
            extra="triton",
            dist="triton",
            devices={"cpu": ("float32", "float16"), "cuda": DTYPES},
            device_missing=torch_device_missing,
            uses=("torch",),
            cuda_needs={"bfloat16": ("triton-bf16",)},  # Triton before 3.x fails cvt.bf16.f32 below sm_80
        ),
        Stack(
            name="mojo",
            module="max.graph",
            extra="mojo",
            dist="mojo",
            devices={"cpu": ("float32",), "cuda": ("float32",)},
            device_missing=max_device_missing,
            uses=("max",),
            executable="mojo",
            float32_matmul={"cuda": "tfloat32"},
        ),
    )
}


ALL_STACKS = tuple(STACKS)
