"""``--baseline OLD.json``: a previous curriculum report to compare this run with; what drifted is a
section of the report (stackcheck.claims.drift), and a regression fails the run. ``--baseline FOLDER``
compares with the report in it recorded on this machine's GPUs (its environment's accelerator), so
one command judges an H100 against the H100's record and an H200 against the H200's."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.claims.results import NotAReport, Report
from stackcheck.plugin.recorder import RECORDER

NONE_FOR_THIS_GPU = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    baseline = config.getoption("baseline", None)
    if not baseline or RECORDER not in config.stash:
        return
    if Path(baseline).is_dir():  # a bad file is a usage error now, not after the run
        from stackcheck.stacks.fingerprint import accelerator

        found, why = baseline_for(Path(baseline), accelerator())
        if found is None:
            config.stash[NONE_FOR_THIS_GPU] = why
            return
        baseline = str(found)
    config.stash[RECORDER].baseline = load_baseline(baseline)


def load_baseline(path: str) -> Report:
    try:
        return Report.load(path)
    except NotAReport as error:
        raise pytest.UsageError(f"--baseline {error}") from None


def baseline_for(folder: Path, accelerator: str) -> tuple[Path | None, str]:
    """The report in ``folder`` recorded on ``accelerator`` (as a report's environment names it), and
    what was there when none was; two of them for one accelerator is a usage error."""
    recorded = {}
    for path in sorted(folder.glob("*.json")):
        recorded.setdefault(load_baseline(str(path)).environment.get("accelerator", "?"), []).append(path)
    mine = recorded.get(accelerator, [])
    if len(mine) > 1:
        raise pytest.UsageError(f"--baseline {folder}: {len(mine)} reports for {accelerator}: {[p.name for p in mine]}")
    if mine:
        return mine[0], ""
    seen = "; ".join(f"{p[0].name}: {a}" for a, p in sorted(recorded.items())) or "no report"
    return None, f"no baseline in {folder} was recorded on {accelerator} ({seen}): this run is its first"


def pytest_stackcheck_report_sections(report: Report) -> list[tuple[str, list[str]]] | None:
    """What drifted since --baseline."""
    from stackcheck.claims import drift

    return [("drift since the baseline", drift.lines(report.drift))] if report.drift is not None else None


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    why = config.stash.get(NONE_FOR_THIS_GPU, None)
    if why is not None:
        terminalreporter.write_line(f"stackcheck: --baseline: {why}")
