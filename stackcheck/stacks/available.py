"""What this machine has: a missing stack, device or tool raises ``Missing`` (a pytest skip with an
install hint); the plugin turns it into a failure when the run was started with ``--require``."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util

import pytest

from stackcheck.paths.tools import tool_path
from stackcheck.stacks.records import STACKS

# tools a test may need besides a stack (chromium: the HTML report's browser test; bubblewrap: grading's sandbox)
# ordinary-user: grading as one (issue 50); sybil: reading the course's listings
TOOLS = ("ncu", "chromium", "bubblewrap", "ordinary-user", "sybil")


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
