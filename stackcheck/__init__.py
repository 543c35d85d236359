"""stackcheck: the course's claims about Y = ReLU(X @ W + b) as pytest assertions.

Test-facing helpers are importable from here (loaded on first use); the implementations under
test live in ``stackcheck.reference``. The package is also the pytest11 entry point ``stackcheck``:
it adds stackcheck's options to every run, and registers the plugin proper (``stackcheck.plugin``)
only for a stackcheck run (``stackcheck.options.activates``), so other projects in the same
environment see nothing of it; ``-p no:stackcheck`` switches it off altogether.
"""

from __future__ import annotations

import importlib

import pytest

_HELPERS = {
    "need": "stackcheck.env",
    "assert_matches_reference": "stackcheck.numerics",
    "reference_forward": "stackcheck.numerics",
    "stack_params": "stackcheck.stacks",
    "device_params": "stackcheck.stacks",
}
__all__ = list(_HELPERS)


def __getattr__(name: str):
    if name in _HELPERS:
        return getattr(importlib.import_module(_HELPERS[name]), name)
    raise AttributeError(f"module 'stackcheck' has no attribute {name!r}")


def pytest_addoption(parser: pytest.Parser) -> None:
    from stackcheck import options

    options.add(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    from stackcheck import options

    if config.pluginmanager.has_plugin("stackcheck.plugin") or not options.activates(config):
        return
    config.pluginmanager.import_plugin("stackcheck.plugin")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` in a stackcheck run on a GPU host: a few workers a GPU (gpus.auto_workers), not one
    a core. PYTEST_XDIST_AUTO_NUM_WORKERS, xdist's own override, still wins."""
    import os

    from stackcheck import options

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not options.activates(config):
        return None
    from stackcheck import gpus

    return gpus.auto_workers(os.cpu_count())
