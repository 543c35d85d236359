"""stackcheck: the course's claims about Y = ReLU(X @ W + b) as pytest assertions.

Each helper has one import path, the module that owns it (``stackcheck.stacks.available.need``,
``stackcheck.stacks.params.stack_params``, ``stackcheck.evidence.numerics.assert_matches_reference``, ...); the
implementations under test live in ``stackcheck.impl.reference``. The package itself is the pytest11
entry point ``stackcheck``: it adds stackcheck's options to every run, and registers the plugin
proper (``stackcheck.plugin.hooks``) only for a stackcheck run (``stackcheck.plugin.options.activates``), so other
projects in the same environment see nothing of it; ``-p no:stackcheck`` switches it off.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    from stackcheck.plugin import options

    options.add(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    from stackcheck.plugin import options

    if config.pluginmanager.has_plugin("stackcheck.plugin.hooks") or not options.activates(config):
        return
    # hooks imports its sibling plugins before registering them (its pytest_plugins): mark them for
    # assertion rewriting first, or pytest warns that they were imported too early to rewrite
    config.pluginmanager.rewrite_hook.mark_rewrite(*options.PLUGIN_MODULES)
    config.pluginmanager.import_plugin("stackcheck.plugin.hooks")


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` in a stackcheck run on a GPU host: a few workers a GPU (gpus.auto_workers), as many
    as its memory holds (device_profile.Profile.workers), not one a core.
    PYTEST_XDIST_AUTO_NUM_WORKERS, xdist's own override, still wins."""
    import os

    from stackcheck.plugin import options

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not options.activates(config):
        return None
    from stackcheck.evidence import device_profile, gpus

    profile = device_profile.current()
    return gpus.auto_workers(os.cpu_count(), per_gpu=profile.workers if profile else gpus.WORKERS_PER_GPU)
