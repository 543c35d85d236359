"""``--baseline OLD.json``: a previous curriculum report to compare this run with; what drifted is a
section of the report (stackcheck.claims.drift), and a regression fails the run."""

from __future__ import annotations

import json

import pytest

from stackcheck.plugin.recorder import RECORDER


def pytest_configure(config: pytest.Config) -> None:
    baseline = config.getoption("baseline", None)
    if baseline:  # a bad file is a usage error now, not after the run
        config.stash[RECORDER].baseline = load_baseline(baseline)


def load_baseline(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        raise pytest.UsageError(f"--baseline {path}: not a readable curriculum report: {error}") from None
    if not isinstance(report, dict) or "claims" not in report:
        raise pytest.UsageError(f"--baseline {path}: not a curriculum report (no 'claims')")
    return report


def pytest_stackcheck_report_sections(report: dict) -> list[tuple[str, list[str]]] | None:
    """What drifted since --baseline."""
    from stackcheck.claims import drift

    return [("drift since the baseline", drift.lines(report["drift"]))] if "drift" in report else None
