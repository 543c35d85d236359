"""pytest parameters drawn from the stack records: ``stack_params("numpy", "torch")`` yields
``(stack, device)`` (with ``dtypes=True`` ``(stack, device, dtype)``) with each stack's markers;
``device_params("jax")`` the devices alone; ``tolerance_row`` the tolerance row a result is held to."""

from __future__ import annotations

import pytest

from stackcheck.evidence import device_profile
from stackcheck.stacks.records import ALL_STACKS, ROW_NEEDS, STACKS, Stack


def _marks(name: str, device: str, dtype: str | None = None) -> list:
    marks = [getattr(pytest.mark, m) for m in STACKS[name].markers] + [getattr(pytest.mark, device)]
    needs = STACKS[name].cuda_needs.get(dtype, ()) if device == "cuda" else ()
    return marks + ([pytest.mark.gpu_needs(*needs)] if needs else [])


def _devices(name: str, devices: tuple[str, ...] | None) -> dict[str, tuple[str, ...]]:
    return {d: dts for d, dts in STACKS[name].devices.items() if devices is None or d in devices}


def stack_params(*names: str, devices: tuple[str, ...] | None = None, dtypes: bool = False) -> list:
    """pytest.param(stack, device[, dtype]) for every device (and dtype) each named stack runs on."""
    params = []
    for name in names or ALL_STACKS:
        for device, device_dtypes in _devices(name, devices).items():
            if dtypes:
                params += [
                    pytest.param(name, device, dt, id=f"{name}-{device}-{dt}", marks=_marks(name, device, dt))
                    for dt in device_dtypes
                ]
            else:
                params.append(pytest.param(name, device, id=f"{name}-{device}", marks=_marks(name, device)))
    return params


def device_params(name: str, devices: tuple[str, ...] | None = None) -> list:
    """pytest.param(device) for every device stack ``name`` runs on, with that stack's markers."""
    return [
        pytest.param(device, id=f"{name}-{device}", marks=_marks(name, device)) for device in _devices(name, devices)
    ]


def tolerance_row(stack: str, device: str, dtype: str) -> str:
    """The row of the tolerance policy ``stack``'s result on ``device`` in ``dtype`` is held to: the
    dtype's own, except where the stack's float32 matmuls are not full float32 there (§5.5), and
    only on a GPU that has the feature that row needs (TF32: not a T4; this run's device profile)."""
    if dtype != "float32":
        return dtype
    row = _record(stack).float32_matmul.get(device, dtype)
    need = ROW_NEEDS.get(row)
    profile = device_profile.current() if need else None
    return dtype if profile is not None and profile.lacks(need) else row


def _record(stack: str) -> Stack:
    if stack not in STACKS:
        raise ValueError(f"unknown stack {stack!r}; known: {sorted(STACKS)}")
    return STACKS[stack]
