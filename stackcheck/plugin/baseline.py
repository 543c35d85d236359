"""``--baseline OLD.json``: a previous curriculum report to compare this run with; what drifted is a
section of the report (stackcheck.claims.drift), and a regression fails the run."""

from __future__ import annotations

import pytest

from stackcheck.claims.results import NotAReport, Report
from stackcheck.plugin.recorder import RECORDER


def pytest_configure(config: pytest.Config) -> None:
    baseline = config.getoption("baseline", None)
    if baseline and RECORDER in config.stash:  # a bad file is a usage error now, not after the run
        config.stash[RECORDER].baseline = load_baseline(baseline)


def load_baseline(path: str) -> Report:
    try:
        return Report.load(path)
    except NotAReport as error:
        raise pytest.UsageError(f"--baseline {error}") from None


def pytest_stackcheck_report_sections(report: Report) -> list[tuple[str, list[str]]] | None:
    """What drifted since --baseline."""
    from stackcheck.claims import drift

    return [("drift since the baseline", drift.lines(report.drift))] if report.drift is not None else None
