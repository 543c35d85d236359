"""The hook stackcheck adds to pytest (stackcheck.plugin.hooks registers it with pytest_addhooks)."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.hookspec
def pytest_stackcheck_report_sections(report, config) -> list[tuple[str, list[str]]] | None:
    """(title, lines) sections a part of stackcheck adds, drawn from ``report`` (the curriculum
    report, a stackcheck.claims.results.Report), to the run's terminal summary and to the Markdown
    report alike: the plugin's claims table (first), the course gate's listings, errata and drift,
    the homework score. ``config``: the run's (its options), None for a saved report rendered again.
    A part with nothing to show returns None."""


def sections(report) -> list[tuple[str, list[str]]]:
    """The sections of a saved ``report`` outside a run (``stackcheck report FILE``): the hook asked
    of the plugin's own modules, as a run asks it, so a report prints as its run's summary did."""
    from stackcheck.plugin.options import PLUGIN_MODULES

    manager = pytest.PytestPluginManager()
    manager.add_hookspecs(sys.modules[__name__])
    for name in PLUGIN_MODULES:
        if not manager.has_plugin(name):  # hooks registers the others as its pytest_plugins
            manager.register(importlib.import_module(name), name)
    return [s for found in manager.hook.pytest_stackcheck_report_sections(report=report, config=None) for s in found]
