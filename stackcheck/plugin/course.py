"""``--course PATH``: the course's listings (stackcheck.course.listings) collected as test items with
the claim tests' device and stack markers, known errata as strict expected failures, and their
section of the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.plugin.recorder import LISTING, LISTING_LINE, LISTING_NOTE
from stackcheck.stacks.records import STACKS

COURSE = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    spec = config.getoption("course", None)
    if spec is None:
        return
    # a chapter's listings share one namespace, and a listing runs the chapter's earlier ones where
    # they have not run: xdist's loadgroup (hooks.balance_workers) keeps each chapter on one worker
    # (its xdist_group mark, pytest_itemcollected), so §10.3's and §10.4's MAX compiles run once
    if _sybil_missing():
        raise pytest.UsageError(f"--course needs Sybil: {_sybil_missing()}")
    from stackcheck.course import listings

    try:
        paths = listings.documents(str(listings.shipped()) if spec == "shipped" else spec)
        for path in paths:
            listings.sybil().parse(path)  # fence info errors now, in one line
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[COURSE] = paths
    for path in paths:
        if str(path) not in config.args:
            config.args.append(str(path))


def _sybil_missing() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("sybil") else "sybil is not installed (pip install sybil)"


def pytest_collect_file(file_path: Path, parent):
    paths = parent.config.stash.get(COURSE, [])
    if file_path.resolve() in paths:
        from sybil.integration.pytest import SybilFile

        from stackcheck.course import listings

        return SybilFile.from_parent(parent, path=file_path, sybils=[listings.sybil()])
    return None


def listing_of(item: pytest.Item):
    """The listings.Listing a Sybil item runs, or None for any other item."""
    if COURSE not in item.config.stash:
        return None
    from stackcheck.course import listings

    parsed = getattr(getattr(item, "example", None), "parsed", None)
    return parsed if isinstance(parsed, listings.Listing) else None


def pytest_itemcollected(item: pytest.Item) -> None:
    """A listing's chapter is its xdist group, marked as it is collected: xdist's worker reads the
    marks in its own pytest_collection_modifyitems, which runs before the plugin's."""
    listing = listing_of(item)
    if listing is not None and item.config.pluginmanager.hasplugin("xdist"):
        item.add_marker(pytest.mark.xdist_group(f"course-{item.path.stem}-{listing.chapter}"))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The listings run first: they build Mojo packages and compile MAX graphs, the longest items of
    a run, and started last they leave the other xdist workers idle while one finishes them. They run
    in the document's order, as the reader runs them: out of it (the MAX tests last), a listing ran its
    chapter's earlier ones first, and they ran again as their own tests (§10.4's compile twice)."""
    listings = sorted((item for item in items if listing_of(item) is not None), key=_document_order)
    if listings:
        items[:] = listings + [item for item in items if listing_of(item) is None]


def _document_order(item: pytest.Item) -> tuple[str, int]:
    return str(item.path), listing_of(item).line


def mark_listings(items: list[pytest.Item]) -> None:
    """Each listing item gets its stack and device markers and its description; a known erratum is
    a strict xfail, so a course release that fixes it turns the run red; an erratum known from a line
    on (``differs_from``) is checked up to that line instead, and must still differ after it."""
    for item in items:
        listing = listing_of(item)
        if listing is None:
            continue
        from stackcheck.course import listings  # Sybil and NumPy: only in a run that collected listings

        item.add_marker(getattr(pytest.mark, listing.device))
        if listing.stack in STACKS:
            item.add_marker(getattr(pytest.mark, listing.stack))
        if listing.erratum and not listings.known_part(listing):  # a known part is checked around, not xfailed
            item.add_marker(
                pytest.mark.xfail(
                    strict=True,
                    raises=listings.ListingError,
                    reason=f"known erratum: {listing.erratum.get('reason', '')}",
                )
            )
        item.user_properties.append((LISTING, listing.describe()))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A listing that ran other than as written (against a working form, with the course's GPU
    edit) says so in its report; a failing one names the document's line it failed at, and shows that
    line and the error only (``-v`` shows the traceback)."""
    report = yield
    listing = listing_of(item) if call.when == "call" else None
    if listing is not None:
        note = item.example.namespace.get("__notes__", {}).get(listing.id)
        if note:
            report.user_properties.append((LISTING_NOTE, note))
        failed = call.excinfo.value if call.excinfo is not None else None
        if getattr(failed, "line", None):
            report.user_properties.append((LISTING_LINE, {"line": failed.line, "error": str(failed)}))
            if report.failed and item.config.get_verbosity() < 1:  # the error and its line; -v for the rest
                report.longrepr = f"{item.example.path}:{failed.line}: {failed}\n    {failed.text.strip()}"
    return report


def pytest_stackcheck_report_sections(report) -> list[tuple[str, list[str]]] | None:
    """The course's listings with their errata (``report``: a claims.results.Report)."""
    from stackcheck.report import render as rendering

    return [("course listings", rendering.listing_lines(report))] if report.listings else None
