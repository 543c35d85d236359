"""The report's plots (stackcheck.report.plots), drawn from the shipped reports: every kind is drawn,
each judged line is in the picture with the passing side shaded, every number a test judged is on
the page, and every label is 9 px or more where a phone shows the plot (issue 37, item 3)."""

import concurrent.futures
import dataclasses
import os
import re
from pathlib import Path

import pytest

from stackcheck.claims.results import Report
from stackcheck.report import html, plots

pytestmark = [pytest.mark.meta, pytest.mark.xdist_group("html-pages")]

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {name: ROOT / "baselines" / f"{name}.json" for name in ("cpu", "h200")}
# The plot's width at a 390 px viewport: the body's padding (6 px a side at <= 600 px), the claim's
# border (5 + 1 px) and padding (10 px a side) taken from 390 px (report.html's STYLE; the browser
# test measures it in Chromium).
PHONE_PLOT_PX = 390 - 2 * 6 - 5 - 1 - 2 * 10
KINDS = {"timing", "counters", "bytes", "sweep", "histogram", "verdict"}


def drawn() -> list[tuple[str, str, dict, plots.Plot]]:
    """(report, test, evidence record, plot) for every drawn plot of the shipped reports (a table of
    judged numbers that are no ratio has no picture)."""
    found = []
    for name, path in SHIPPED.items():
        for _, test in Report.load(path).tests():
            for record in test.evidence:
                if isinstance(record, dict):
                    found += [(name, test.nodeid, record, p) for p in plots.plots(record) if p.drawn]
    return found


@pytest.fixture(scope="module")
def every_plot():
    if not plots.available():
        pytest.skip(plots.MISSING)
    return drawn()


def test_every_kind_of_plot_is_drawn_from_the_shipped_reports(every_plot):
    assert KINDS <= {p.kind for *_, p in every_plot}, KINDS - {p.kind for *_, p in every_plot}


def test_plots_drawn_by_several_processes_are_the_plots_drawn_here(every_plot, monkeypatch):
    """A page's plots are drawn at once, by processes where the machine has cores and there are plots
    enough (plots.draw_all): the pictures are the ones this process draws, one at a time."""
    here = [p for *_, p in every_plot[: 2 * plots.PER_PROCESS]]
    started = []

    class Pool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, workers, **options):
            started.append(workers)
            super().__init__(workers, **options)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    again = plots.draw_all([dataclasses.replace(p, svg="") for p in here])
    assert started == [2] and [p.svg for p in again] == [p.svg for p in here]


def test_each_judged_line_is_drawn_with_its_passing_side(every_plot):
    judged = [(where, p) for *where, p in every_plot if p.lines]
    assert judged, "no shipped report holds a judged line"
    for where, p in judged:
        lines = re.findall(r'<g id="judged-line-(\d+)"', p.svg)
        assert sorted(map(int, lines)) == list(range(len(p.lines))), (where[:2], p.kind, lines)
        assert p.svg.count('style="fill: #1a7f37; fill-opacity: 0.15') >= len(p.lines), (where[:2], "no shading")
        for *_, label in p.lines:
            assert f">{label}</text>" in p.svg.replace("&#x27;", "'"), label


def test_every_judged_number_is_on_the_page(draw_page):
    for name, path in SHIPPED.items():
        page = draw_page(path)
        for _, test in Report.load(path).tests():
            for record in test.evidence:
                for j in plots.judgments(record) if isinstance(record, dict) else []:
                    for value in (j["measured"], j["line"]):
                        assert f"<td>{html.esc(html._fmt(value))}</td>" in page, (name, test.nodeid, j)


def test_every_label_is_9_px_or_more_on_a_phone(every_plot):
    for *where, p in every_plot:
        width = float(re.search(r'viewBox="0 0 ([\d.]+) ', p.svg).group(1))
        sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", p.svg)]
        smallest = min(sizes) * PHONE_PLOT_PX / width
        assert sizes and smallest >= 9, (where[:2], p.kind, f"{smallest:.1f} px")
