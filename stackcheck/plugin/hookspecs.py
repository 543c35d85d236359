"""The hook stackcheck adds to pytest (stackcheck.plugin.hooks registers it with pytest_addhooks)."""

from __future__ import annotations

import pytest


@pytest.hookspec
def pytest_stackcheck_report_sections(report) -> list[tuple[str, list[str]]] | None:
    """(title, lines) sections a part of stackcheck adds, drawn from ``report`` (the curriculum
    report, a stackcheck.claims.results.Report), to the run's terminal summary and to the Markdown
    report alike: the plugin's claims table (first), the course gate's listings, errata and drift,
    the homework score. A part with nothing to show returns None."""
