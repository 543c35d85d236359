"""Plugin layer: ``--course PATH`` collects the course's listings (stackcheck.course) as test items
with the claim tests' device and stack markers, known errata as strict expected failures; and
``--baseline OLD.json`` reports what drifted since a previous curriculum report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.recorder import LISTING, LISTING_NOTE, RECORDER
from stackcheck.stacks import STACKS

COURSE = pytest.StashKey[list]()


def pytest_configure(config: pytest.Config) -> None:
    spec = config.getoption("course", None)
    baseline = config.getoption("baseline", None)
    if baseline:  # a bad file is a usage error now, not after the run
        config.stash[RECORDER].baseline = load_baseline(baseline)
    if spec is None:
        return
    if _sybil_missing():
        raise pytest.UsageError(f"--course needs Sybil: {_sybil_missing()}")
    from stackcheck import course  # Sybil is imported only for a course run

    try:
        paths = course.documents(str(course.shipped()) if spec == "shipped" else spec)
        for path in paths:
            course.sybil().parse(path)  # fence info errors now, in one line
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[COURSE] = paths
    for path in paths:
        if str(path) not in config.args:
            config.args.append(str(path))


def _sybil_missing() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("sybil") else "sybil is not installed (pip install sybil)"


def load_baseline(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        raise pytest.UsageError(f"--baseline {path}: not a readable curriculum report: {error}") from None
    if not isinstance(report, dict) or "claims" not in report:
        raise pytest.UsageError(f"--baseline {path}: not a curriculum report (no 'claims')")
    return report


def pytest_collect_file(file_path: Path, parent):
    paths = parent.config.stash.get(COURSE, [])
    if file_path.resolve() in paths:
        from sybil.integration.pytest import SybilFile

        from stackcheck import course

        return SybilFile.from_parent(parent, path=file_path, sybils=[course.sybil()])
    return None


def listing_of(item: pytest.Item):
    """The course.Listing a Sybil item runs, or None for any other item."""
    if COURSE not in item.config.stash:
        return None
    from stackcheck import course

    parsed = getattr(getattr(item, "example", None), "parsed", None)
    return parsed if isinstance(parsed, course.Listing) else None


def mark_listings(items: list[pytest.Item]) -> None:
    """Each listing item gets its stack and device markers and its description; a known erratum is
    a strict xfail, so a course release that fixes it turns the run red."""
    for item in items:
        listing = listing_of(item)
        if listing is None:
            continue
        item.add_marker(getattr(pytest.mark, listing.device))
        if listing.stack in STACKS:
            item.add_marker(getattr(pytest.mark, listing.stack))
        if listing.erratum:
            from stackcheck import course

            item.add_marker(
                pytest.mark.xfail(
                    strict=True,
                    raises=course.ListingError,
                    reason=f"known erratum: {listing.erratum.get('reason', '')}",
                )
            )
        item.user_properties.append((LISTING, listing.describe()))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A listing that ran other than as written (against a working form, with the course's GPU
    edit) says so in its report."""
    report = yield
    listing = listing_of(item) if call.when == "call" else None
    if listing is not None:
        note = item.example.namespace.get("__notes__", {}).get(listing.id)
        if note:
            report.user_properties.append((LISTING_NOTE, note))
    return report


def pytest_stackcheck_report_sections(report: dict) -> list[tuple[str, list[str]]] | None:
    """The course's listings with their errata, and what drifted since --baseline."""
    from stackcheck import drift
    from stackcheck import report as rendering

    found = [("course listings", rendering.listing_lines(report))] if report.get("listings") else []
    if "drift" in report:
        found.append(("drift since the baseline", drift.lines(report["drift"])))
    return found or None
