"""Several machines' curriculum reports as one claim x machine matrix (``stackcheck merge``): the
versions of each machine (those that differ marked), each claim's status on each, where the machines
disagree (verified on one, failed on another), where they differ (verified on one, not run or skipped
on another), and the timings whose medians moved further apart than their own trials scattered.
Written as JSON, Markdown and a self-contained HTML page."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stackcheck.claims import catalogue
from stackcheck.claims.results import ClaimResult, Report, Status
from stackcheck.report import html as page


def load(paths: list[str]) -> list[tuple[str, Report]]:
    """(label, report) for each path; a file that is not a curriculum report is a ValueError
    (results.NotAReport) that names it, and so is a run given twice (one file twice, or two copies of
    one run's report: its environment, date to the second included, is the run's)."""
    found = []
    runs: dict[str, str] = {}  # each run's environment, as JSON -> the path that gave it
    files: dict[Path, str] = {}
    for path in paths:
        again = files.get(Path(path).resolve())
        if again is not None:
            raise ValueError(f"merge: {path} is given twice (as {again}); give each run's report once")
        files[Path(path).resolve()] = path
        report = Report.load(path)
        run = json.dumps(report.environment, sort_keys=True, default=str)
        if run in runs:
            raise ValueError(
                f"merge: {path} and {runs[run]} are reports of one run (recorded {report.environment.get('date', '?')}"
                f" on {_label(path, report.environment).partition(': ')[2]}); give each run's report once"
            )
        runs[run] = path
        found.append((_label(path, report.environment), report))
    if len(found) < 2:
        raise ValueError("merge needs two reports or more")
    labels = [label for label, _ in found]
    return [(f"{label} ({i + 1})" if labels.count(label) > 1 else label, r) for i, (label, r) in enumerate(found)]


def _label(path: str, env: dict) -> str:
    accelerator = env.get("accelerator", "")
    device = accelerator if accelerator and not accelerator.startswith("none") else env.get("cpu", "cpu")
    return f"{Path(path).stem}: {device}"


def matrix(reports: list[tuple[str, Report]], pages: dict[str, str] | None = None) -> dict:
    """{"machines": [{label, versions, date, page ...}], "claims": [{id, title, section, statuses,
    disagree, differ, moved}], "disagreements", "differences", "moved", "versions_differ"}; ``pages``:
    each label's HTML report, for the cells' links."""
    known = catalogue.catalogue()
    order = list(known) + [c.id for _, r in reports for c in r.claims if c.id not in known]
    statuses = {label: {c.id: c for c in r.claims} for label, r in reports}
    rows = []
    for cid in dict.fromkeys(order):
        cells = {label: by_id[cid].status.value if cid in by_id else "absent" for label, by_id in statuses.items()}
        if all(s == "absent" for s in cells.values()):
            continue
        seen = set(cells.values())
        some = next(by_id[cid] for by_id in statuses.values() if cid in by_id)
        disagree = Status.VERIFIED in seen and any(Status(s).failing for s in seen if s != "absent")
        rows.append(
            {
                "id": cid,
                "section": some.section,
                "title": some.title,
                "statuses": cells,
                "disagree": disagree,
                "differ": not disagree and Status.VERIFIED in seen and len(seen) > 1,
                "moved": moved({label: by_id.get(cid) for label, by_id in statuses.items()}),
            }
        )
    machines = [
        {
            "label": label,
            "date": r.environment.get("date", ""),
            "accelerator": r.environment.get("accelerator", ""),
            "cpu": r.environment.get("cpu", ""),
            "versions": r.environment.get("versions", {}),
            "code_revision": r.environment.get("code_revision", ""),
            "page": (pages or {}).get(label, ""),
        }
        for label, r in reports
    ]
    keys = dict.fromkeys(k for m in machines for k in m["versions"])
    return {
        "machines": machines,
        "claims": rows,
        "disagreements": [row["id"] for row in rows if row["disagree"]],
        "differences": [row["id"] for row in rows if row["differ"]],
        "moved": [row["id"] for row in rows if row["moved"]],
        "versions_differ": [k for k in keys if len({m["versions"].get(k, "-") for m in machines}) > 1],
    }


def moved(claims: dict[str, ClaimResult | None]) -> list[dict]:
    """The timings of one claim, by test and measurement, whose medians on the machines (``claims``:
    the claim's record on each, by label) lie further apart than the trials of either scattered (its
    ``spread``: the slowest trial over the fastest): a change no rerun on one machine would show."""
    timings: dict[tuple[str, int, str], dict[str, dict]] = {}
    for label, claim in claims.items():
        for test in claim.tests if claim is not None else ():
            for i, evidence in enumerate(test.evidence):
                for where, timing in _timings(evidence):
                    timings.setdefault((test.nodeid, i, where), {})[label] = timing
    found = []
    for (nodeid, _, where), on in timings.items():
        medians = {label: t["median_ms"] for label, t in on.items() if t.get("median_ms", 0) > 0}
        if len(medians) < len(claims):  # measured on every machine, or not compared
            continue
        ratio = round(max(medians.values()) / min(medians.values()), 2)  # as the spreads are recorded
        spread = max(on[label].get("spread", 1.0) for label in medians)
        if ratio > spread:
            found.append(
                {
                    "test": nodeid,
                    "timing": where,
                    "medians_ms": medians,
                    "ratio": ratio,
                    "spread": spread,
                }
            )
    return found


def _timings(evidence, where: str = ""):
    """(path, timing) for every measured timing in one test's evidence: a dict with a median and a spread."""
    if isinstance(evidence, dict):
        if "median_ms" in evidence and "spread" in evidence:
            yield where, evidence
            return
        for key, value in evidence.items():
            if key != "repro":
                yield from _timings(value, f"{where}.{key}" if where else key)
    elif isinstance(evidence, list):
        for i, value in enumerate(evidence):
            yield from _timings(value, f"{where}[{i}]")


def _verdict(row: dict) -> str:
    return "disagree" if row["disagree"] else "differ" if row["differ"] else "agree"


def _counts(found: dict) -> list[tuple[str, list[str]]]:
    """(what is counted, the claims counted) for the matrix's three kinds of difference."""
    return [
        ("Machines disagree (verified on one, failed on another)", found["disagreements"]),
        ("Verified on some machines only (skipped or not run on the others)", found["differences"]),
        ("Timings whose medians moved further apart than their trials scattered", found["moved"]),
    ]


def markdown(found: dict) -> str:
    labels = [m["label"] for m in found["machines"]]
    lines = ["# stackcheck: claims across machines", "", "## Machines", ""]
    for m in found["machines"]:
        versions = ", ".join(
            f"**{k} {v}**" if k in found["versions_differ"] else f"{k} {v}"
            for k, v in m["versions"].items()
            if v != "not installed"
        )
        lines.append(f"- **{m['label']}** ({m['date']}): {versions}; code {m['code_revision']}")
    lines += ["", *(f"- {what}: {len(ids)} claim(s): {', '.join(ids) or 'none'}" for what, ids in _counts(found))]
    lines += [f"- Versions that differ: {', '.join(found['versions_differ']) or 'none'}", ""]
    lines += ["| claim | section | " + " | ".join(labels) + " | |", "|---|---|" + "---|" * len(labels) + "---|"]
    for row in found["claims"]:
        cells = " | ".join(f"{page.SYMBOLS.get(s, '')} {s}" for s in row["statuses"].values())
        verdict = _verdict(row)
        lines.append(
            f"| `{row['id']}` | {row['section']} | {cells} | {'**' + verdict + '**' if verdict != 'agree' else ''} |"
        )
    if found["moved"]:
        lines += [
            "",
            "## Timings that moved",
            "",
            "| claim | test | timing | medians (ms) | apart | spread |",
            "|---|---|---|---|---|---|",
        ]
        for row in found["claims"]:
            for m in row["moved"]:
                medians = " / ".join(f"{v:g}" for v in m["medians_ms"].values())
                lines.append(
                    f"| `{row['id']}` | `{m['test']}` | {m['timing']} | {medians} | {m['ratio']}x | {m['spread']}x |"
                )
    return "\n".join(lines) + "\n"


def html(found: dict) -> str:
    esc = page.esc
    body = ["<header><h1>stackcheck: claims across machines</h1></header>", '<section id="machines"><h2>Machines</h2>']
    versions = list(dict.fromkeys(k for m in found["machines"] for k in m["versions"]))
    body.append(
        '<div class="scroll"><table><thead><tr><th>package</th>'
        + "".join(f"<th>{esc(m['label'])}</th>" for m in found["machines"])
        + "</tr></thead><tbody>"
    )
    for key in ["date", "code_revision"]:
        body.append(f"<tr><th>{key}</th>" + "".join(f"<td>{esc(m[key])}</td>" for m in found["machines"]) + "</tr>")
    for key in versions:
        differs = key in found["versions_differ"]
        body.append(
            (
                f'<tr class="differ"><th>{esc(key)} <strong>(differs)</strong></th>'
                if differs
                else f"<tr><th>{esc(key)}</th>"
            )
            + "".join(f"<td>{esc(m['versions'].get(key, '-'))}</td>" for m in found["machines"])
            + "</tr>"
        )
    body.append("</tbody></table></div></section>")
    body.append('<section id="matrix"><h2>Claims</h2><ul>')
    for what, ids in _counts(found):
        links = ", ".join(f'<a href="#row-{esc(c)}">{esc(c)}</a>' for c in ids) or "none"
        body.append(f"<li>{esc(what)}: {len(ids)} claim(s): {links}</li>")
    body.append(
        "</ul>"
        + '<div class="scroll"><table><thead><tr><th>claim</th>'
        + "".join(f"<th>{esc(m['label'])}</th>" for m in found["machines"])
        + "<th>across machines</th></tr></thead><tbody>"
    )
    for row in found["claims"]:
        verdict = _verdict(row)
        css = f' class="{verdict}"' if verdict != "agree" else ""
        cells = []
        for m, s in zip(found["machines"], row["statuses"].values()):
            text = page.status(s) if s in page.SYMBOLS else esc(s)
            link = f"{m['page']}#claim-{page.slug(row['id'])}" if m["page"] and s != "absent" else ""
            cells.append(f'<td><a href="{esc(link)}">{text}</a></td>' if link else f"<td>{text}</td>")
        moved = "".join(
            f"<br>timing moved: <code>{esc(m['test'].rpartition('::')[2])}</code> {esc(m['timing'])} "
            + " / ".join(f"{v:g}" for v in m["medians_ms"].values())
            + f" ms ({m['ratio']}x apart; trials scattered {m['spread']}x)"
            for m in row["moved"]
        )
        word = {"disagree": "<strong>✗ disagree</strong>", "differ": "<strong>≠ verified on some only</strong>"}
        body.append(
            f'<tr id="row-{esc(row["id"])}"{css}><th scope="row"><code>{esc(row["id"])}</code> '
            f'<span class="meta">§{esc(row["section"])} {esc(row["title"])}</span></th>'
            + "".join(cells)
            + f"<td>{word.get(verdict, 'agree')}{moved}</td></tr>"
        )
    body.append("</tbody></table></div></section>")
    return page.document("stackcheck: claims across machines", body)


def write(paths: list[str], out: str) -> tuple[Path, Path, Path]:
    """Merge the reports at ``paths`` into OUT.json, OUT.md and OUT.html (OUT may carry any of the three
    suffixes); a report's HTML page beside its JSON is linked from its cells."""
    from stackcheck.report.render import report_paths

    json_path, md_path, html_path = report_paths(out)
    reports = load(paths)
    pages = {}
    for (label, _), path in zip(reports, paths):
        beside = Path(path).with_suffix(".html")
        if beside.exists():
            pages[label] = Path(os.path.relpath(beside.resolve(), html_path.parent.resolve())).as_posix()
    found = matrix(reports, pages)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(
        json.dumps(found, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", errors="backslashreplace"
    )
    md_path.write_text(markdown(found), encoding="utf-8", errors="backslashreplace")
    html_path.write_text(html(found), encoding="utf-8", errors="backslashreplace")
    return json_path, md_path, html_path
