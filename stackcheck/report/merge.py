"""Several machines' curriculum reports as one claim x machine matrix (``stackcheck merge``): the
versions of each machine, each claim's status on each, and where the machines disagree (verified
on one, failed on another). Written as JSON, Markdown and a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

from stackcheck.claims import catalogue
from stackcheck.report import html as page

DISAGREE = ({"verified"}, {"failed", "interrupted"})  # a claim is in dispute when both sides occur


def load(paths: list[str]) -> list[tuple[str, dict]]:
    """(label, report) for each path; a file that is not a curriculum report is a ValueError that
    names it."""
    found = []
    for path in paths:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: not a readable curriculum report: {error}") from None
        if not isinstance(report, dict) or not isinstance(report.get("claims"), list) or "environment" not in report:
            raise ValueError(f"{path}: not a curriculum report (no 'claims' and 'environment')")
        found.append((_label(path, report["environment"]), report))
    if len(found) < 2:
        raise ValueError("merge needs two reports or more")
    labels = [label for label, _ in found]
    return [(f"{label} ({i + 1})" if labels.count(label) > 1 else label, r) for i, (label, r) in enumerate(found)]


def _label(path: str, env: dict) -> str:
    accelerator = env.get("accelerator", "")
    device = accelerator if accelerator and not accelerator.startswith("none") else env.get("cpu", "cpu")
    return f"{Path(path).stem}: {device}"


def matrix(reports: list[tuple[str, dict]]) -> dict:
    """{"machines": [{label, versions, date, ...}], "claims": [{id, title, section, statuses, disagree}]}"""
    known = catalogue.catalogue()
    order = list(known) + [c["id"] for _, r in reports for c in r["claims"] if c["id"] not in known]
    statuses = {label: {c["id"]: c for c in r["claims"]} for label, r in reports}
    rows = []
    for cid in dict.fromkeys(order):
        cells = {label: by_id[cid]["status"] if cid in by_id else "absent" for label, by_id in statuses.items()}
        if all(s == "absent" for s in cells.values()):
            continue
        seen = set(cells.values())
        some = next((by_id[cid] for by_id in statuses.values() if cid in by_id), {})
        rows.append(
            {
                "id": cid,
                "section": some.get("section", known.get(cid, {}).get("section", "")),
                "title": some.get("title", known.get(cid, {}).get("title", "")),
                "statuses": cells,
                "disagree": bool(seen & DISAGREE[0] and seen & DISAGREE[1]),
            }
        )
    machines = [
        {
            "label": label,
            "date": r["environment"].get("date", ""),
            "accelerator": r["environment"].get("accelerator", ""),
            "cpu": r["environment"].get("cpu", ""),
            "versions": r["environment"].get("versions", {}),
            "code_revision": r["environment"].get("code_revision", ""),
        }
        for label, r in reports
    ]
    return {"machines": machines, "claims": rows, "disagreements": [row["id"] for row in rows if row["disagree"]]}


def markdown(found: dict) -> str:
    labels = [m["label"] for m in found["machines"]]
    lines = ["# stackcheck: claims across machines", "", "## Machines", ""]
    for m in found["machines"]:
        versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v != "not installed")
        lines.append(f"- **{m['label']}** ({m['date']}): {versions}; code {m['code_revision']}")
    lines += [
        "",
        f"Machines disagree on {len(found['disagreements'])} claim(s): "
        + (", ".join(found["disagreements"]) or "none"),
        "",
    ]
    lines += ["| claim | section | " + " | ".join(labels) + " | |", "|---|---|" + "---|" * len(labels) + "---|"]
    for row in found["claims"]:
        cells = " | ".join(f"{page.SYMBOLS.get(s, '')} {s}" for s in row["statuses"].values())
        lines.append(f"| `{row['id']}` | {row['section']} | {cells} | {'**disagree**' if row['disagree'] else ''} |")
    return "\n".join(lines) + "\n"


def html(found: dict) -> str:
    esc = page.esc
    body = ["<header><h1>stackcheck: claims across machines</h1></header>", '<section id="machines"><h2>Machines</h2>']
    versions = sorted({k for m in found["machines"] for k in m["versions"]})
    body.append(
        '<div class="scroll"><table><thead><tr><th>package</th>'
        + "".join(f"<th>{esc(m['label'])}</th>" for m in found["machines"])
        + "</tr></thead><tbody>"
    )
    for key in ["date", "code_revision"]:
        body.append(f"<tr><th>{key}</th>" + "".join(f"<td>{esc(m[key])}</td>" for m in found["machines"]) + "</tr>")
    for key in versions:
        body.append(
            f"<tr><th>{esc(key)}</th>"
            + "".join(f"<td>{esc(m['versions'].get(key, '-'))}</td>" for m in found["machines"])
            + "</tr>"
        )
    body.append("</tbody></table></div></section>")
    count = len(found["disagreements"])
    body.append(
        f'<section id="matrix"><h2>Claims</h2><p>Machines disagree on <strong>{count}</strong> claim(s)'
        + (": " + ", ".join(f'<a href="#row-{esc(c)}">{esc(c)}</a>' for c in found["disagreements"]) if count else "")
        + '.</p><div class="scroll"><table><thead><tr><th>claim</th>'
        + "".join(f"<th>{esc(m['label'])}</th>" for m in found["machines"])
        + "<th>agree?</th></tr></thead><tbody>"
    )
    for row in found["claims"]:
        css = ' class="disagree"' if row["disagree"] else ""
        body.append(
            f'<tr id="row-{esc(row["id"])}"{css}><th scope="row"><code>{esc(row["id"])}</code> '
            f'<span class="meta">§{esc(row["section"])} {esc(row["title"])}</span></th>'
            + "".join(f"<td>{page.status(s) if s in page.SYMBOLS else esc(s)}</td>" for s in row["statuses"].values())
            + f"<td>{'<strong>✗ disagree</strong>' if row['disagree'] else 'agree'}</td></tr>"
        )
    body.append("</tbody></table></div></section>")
    return page.document("stackcheck: claims across machines", body)


def write(paths: list[str], out: str) -> tuple[Path, Path, Path]:
    """Merge the reports at ``paths`` into OUT.json, OUT.md and OUT.html (OUT may carry any of the three suffixes)."""
    from stackcheck.report.render import report_paths

    found = matrix(load(paths))
    json_path, md_path, html_path = report_paths(out)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(found, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(found), encoding="utf-8")
    html_path.write_text(html(found), encoding="utf-8")
    return json_path, md_path, html_path
