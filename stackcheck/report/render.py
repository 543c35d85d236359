"""Every text rendering of a curriculum report (the ``claims.results.Report`` that
``claims.catalogue.build_report`` makes and the recorder completes): its JSON and Markdown files,
and the terminal summary. The terminal and the Markdown draw on the same sections, which the parts
of stackcheck contribute through the hook ``pytest_stackcheck_report_sections``
(stackcheck.plugin.hookspecs), so the Markdown shows everything the terminal shows: the claims
table, the course's listings and errata, drift since the baseline, homework."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stackcheck.claims.results import Outcome, Report, Status, lacks


def report_paths(path: str) -> tuple[Path, Path, Path]:
    """(JSON, Markdown, HTML) for ``--curriculum-report PATH``: PATH may name any one of them."""
    given = Path(path)
    json_path = given.with_suffix(".json") if given.suffix in (".md", ".html") else given

    def beside(suffix: str) -> Path:
        return json_path.with_suffix(suffix) if json_path.suffix else Path(f"{json_path}{suffix}")

    return json_path, beside(".md"), beside(".html")


def write(report: Report, path: str, sections: list[tuple[str, list[str]]], pages: bool = True) -> tuple[Path, ...]:
    """The report's JSON, and with ``pages`` its Markdown and HTML beside it: the files written."""
    from stackcheck.report import html

    # what a submission printed may hold a lone surrogate, which UTF-8 cannot hold: written as \\udXXX
    # (JSON reads it back as it was), never a half-written file
    json_path, md_path, html_path = report_paths(path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    text = report.dumps()
    json_path.write_text(text, encoding="utf-8", errors="backslashreplace")
    if not pages:
        return (json_path,)
    # the pages are rendered from the report as its file reads back (what it rounds, a sub-millisecond
    # test's seconds, it rounds here too): `stackcheck report` on the file renders them byte for byte
    report = Report.from_json(json.loads(text))
    md_path.write_text(markdown(report, sections), encoding="utf-8", errors="backslashreplace")
    html_path.write_text(html.page(report, sections), encoding="utf-8", errors="backslashreplace")
    return json_path, md_path, html_path


def markdown(report: Report, sections: list[tuple[str, list[str]]]) -> str:
    env = report.environment
    lines = ["# stackcheck curriculum report", ""]
    failures = [(c.id, t) for c in report.claims for t in c.tests if t.outcome == Outcome.FAILED]
    if failures:  # what to fix first, each failure whole (the page leads with them too)
        lines += ["## Failures: what to fix first", ""]
        for cid, t in failures:
            lines += [f"### `{cid}` `{t.nodeid}`", "", *fenced([t.details or t.message or "failed"]), ""]
            if t.revisit:
                lines += [f"Revisit first: [{t.revisit.get('id')}] {t.revisit.get('why')}", ""]
            lines += [f"Rerun: `{t.rerun}`", ""] if t.rerun else []
    lines += ["## Environment (course §14.4)", ""]
    for key, value in env.items():
        if key == "workers":
            lines.append(f"- **workers**: {len(value)}")
            lines += [f"  - {_worker_line(w)}" for w in value]
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "n/a"
        lines.append(f"- **{key}**: {value}")
    lines += [
        "",
        "## Claims",
        "",
        " · ".join(f"{s}: {n}" for s, n in report.counts().items()),
        "",
        "| id | section | kind | status | tests (" + "/".join(Outcome) + ") | claim |",
        "|---|---|---|---|---|---|",
    ]
    for c in (c for c in report.claims if c.tests):  # the claims the run selected
        outcomes = [t.outcome for t in c.tests]
        tally = "/".join(str(outcomes.count(o)) for o in Outcome)
        kind = "stack fact" if c.kind == "stack-fact" else "learner"
        lines.append(f"| `{c.id}` | {c.section} | {kind} | {c.status} | {tally} | {c.title} |")
    untouched = [c.id for c in report.claims if not c.tests]
    if untouched:
        lines += [
            "",
            f"{len(untouched)} of {len(report.claims)} claims were not selected by this run: {', '.join(untouched)}",
        ]
    evidence = [(c.id, t) for c in report.claims for t in c.tests if t.evidence]
    if evidence:
        lines += ["", "## Evidence", ""]
        lines += [
            f"- `{cid}` `{t.nodeid}`: {spanned(json.dumps(list(t.evidence), ensure_ascii=False, default=str))}"
            for cid, t in evidence
        ]
    demos = [(c.id, t.nodeid) for c in report.claims for t in c.tests if not t.counts]
    if demos:
        lines += ["", "## Demonstrations (listed, not counted)", ""]
        lines += [f"- `{cid}` `{nodeid}`" for cid, nodeid in demos]
    for title, section in sections:  # what the terminal shows besides the claims table
        if title == "course claims":
            continue
        lines += ["", f"## {title[0].upper()}{title[1:]}", "", *fenced(section)]
    return "\n".join(lines) + "\n"


def fenced(text: list[str]) -> list[str]:
    """``text`` as a Markdown code block whose fence no line of it can close (CommonMark: a fence
    longer than any run of backticks inside): a failure message quotes what a submission printed."""
    fence = "`" * max(3, 1 + max((len(run) for line in text for run in re.findall(r"`+", line)), default=0))
    return [fence, *text, fence]


def spanned(text: str) -> str:
    """``text`` as one Markdown code span, its delimiters longer than any run of backticks inside."""
    ticks = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{ticks} {text} {ticks}"


def _worker_line(worker: dict) -> str:
    """gw1: CUDA_VISIBLE_DEVICES=1; GPU 1 NVIDIA H200 at 00000000:00:07.0; torch=cuda, jax=gpu"""
    gpus = "; ".join(f"GPU {g['id']} {g.get('name', '?')} at {g.get('pci_bus_id', '?')}" for g in worker["gpus"])
    backends = worker.get("backends")
    backends = ", ".join(f"{k}={v}" for k, v in backends.items()) if isinstance(backends, dict) else backends
    return (
        f"{worker['worker']}: CUDA_VISIBLE_DEVICES={worker['cuda_visible_devices']}; "
        f"{gpus or 'no GPU'}; {backends or 'no backend'}"
    )


TABLE_WIDTH = 120  # a row's characters at most: its title is cut to fit


def terminal_table(report: Report, every: bool = False) -> list[str]:
    """The claims the run selected (those with tests; ``every``: the whole catalogue), one a row by
    area, the facts about the stacks, which no implementation under test takes part in, last: area,
    status (its mark and its word, a column of its own), id, section and title; then the totals over
    every claim, and how to list them all when some are left out."""
    chosen = [c for c in report.claims if every or c.tests or c.status is not Status.UNTESTED]
    areas: dict[str, list] = {}
    for c in chosen:
        areas.setdefault("stacks" if c.kind == "stack-fact" else c.area, []).append(c)
    areas = {
        **{a: cs for a, cs in areas.items() if a != "stacks"},
        **({"stacks": areas["stacks"]} if "stacks" in areas else {}),
    }
    width = max((len(c.id) for c in chosen), default=0)
    sections = min(max((len(c.section) for c in chosen), default=0), 12)  # a longer one pushes its row on
    lines = []
    for area, claims in areas.items():
        for c in claims:
            row = (
                f"{area:>9}  {c.status.mark} {c.status.value:<11}  {c.id:<{width}}  §{c.section:<{sections}}  {c.title}"
            )
            lines.append(row if len(row) <= TABLE_WIDTH else row[: TABLE_WIDTH - 1] + "…")
            if c.status is Status.PARTLY:
                lack = f"{'':>9}    only an instrument or precondition passed; what shows it: {lacks(c.counted())}"
                lines.append(lack if len(lack) <= TABLE_WIDTH else lack[: TABLE_WIDTH - 1] + "…")
    lines.append(
        "   claims: "
        + ", ".join(f"{n} {s}" for s, n in report.counts().items() if n or s not in (Status.INTERRUPTED, Status.PARTLY))
        + "   ("
        + ", ".join(f"{s.mark} {s}" for s in Status)
        + ")"
    )
    if len(chosen) < len(report.claims):
        every = len(report.claims)
        lines.append(f"   listed: the {len(chosen)} claim(s) this run selected; -v or --claims all lists all {every}")
    return lines


def markup(line: str) -> dict:
    """The terminal's colours for a summary line (the words say it too: colour is never alone)."""
    return {
        "green": line.startswith(("PASS", "score")),
        "red": line.startswith(("FAIL", "  ERRATUM")),
        "yellow": line.startswith(("TODO", "  known")),
    }


def listing_lines(report: Report) -> list[str]:
    """One line per listing, then each erratum: section, versions, first error, working form."""
    out = [
        f"  §{r['section']:<5} {r['stack']:<14} {r['device']:<4} {r['outcome']}"
        + (f" ({r['reason']})" if r.get("reason") and r["outcome"] == "skipped" else "")
        + (f": {r['note']}" if r.get("note") else "")
        for r in report.listings or ()
    ]
    for e in report.errata or ():
        versions = ", ".join(f"{d} {v}" for d, v in e["versions"].items())
        out.append(
            f"  {'known erratum' if e['known'] else 'ERRATUM'} listing §{e['section']} ({versions}), "
            f"line {e.get('failing_line', '?')}: {e['first_error']}"
            + (f"; working form: {e['working_form']}" if e["working_form"] else "")
        )
    return out
