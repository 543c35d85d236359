"""The course as data: the claim catalogue (fixtures/claims.toml) and the curriculum report."""
from __future__ import annotations

import functools
import importlib.resources
import json
import tomllib
from pathlib import Path

STATUSES = ("verified", "failed", "skipped", "untested")


def catalogue_path() -> Path:
    in_checkout = Path(__file__).resolve().parent.parent / "fixtures" / "claims.toml"
    if in_checkout.exists():
        return in_checkout
    return Path(str(importlib.resources.files("stackcheck.fixtures") / "claims.toml"))


@functools.cache
def catalogue() -> dict[str, dict]:
    with open(catalogue_path(), "rb") as f:
        entries = tomllib.load(f)["claim"]
    return {entry["id"]: entry for entry in entries}


def status(outcomes: list[str]) -> str:
    """verified: >=1 passed and none failed; failed: any failed; skipped: all skipped; untested: none."""
    if not outcomes:
        return "untested"
    if "failed" in outcomes:
        return "failed"
    if "passed" in outcomes:
        return "verified"
    return "skipped"


def build_report(results: dict[str, dict], environment: dict) -> dict:
    """``results``: nodeid -> {"outcome", "claims", "device", "evidence"} for every test that ran.
    Tests proving no claim (the suite's meta-tests) are listed under "other_tests"."""
    claims = []
    for cid, entry in catalogue().items():
        tests = [{"nodeid": nodeid, "outcome": r["outcome"], "device": r["device"],
                  **({"evidence": r["evidence"]} if r.get("evidence") else {})}
                 for nodeid, r in sorted(results.items()) if cid in r["claims"]]
        claims.append({"id": cid, "section": entry["section"], "title": entry["title"], "area": entry["area"],
                       "status": status([t["outcome"] for t in tests]), "tests": tests})
    other = [{"nodeid": nodeid, "outcome": r["outcome"], "device": r["device"],
              **({"evidence": r["evidence"]} if r.get("evidence") else {})}
             for nodeid, r in sorted(results.items()) if not r["claims"]]
    return {"environment": environment, "claims": claims, "other_tests": other}


def write_report(report: dict, path: str) -> tuple[Path, Path]:
    json_path = Path(path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    md_path = json_path.with_suffix(".md")
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path


def markdown(report: dict) -> str:
    env = report["environment"]
    lines = ["# stackcheck curriculum report", "", "## Environment (course §14.4)", ""]
    for key, value in env.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "n/a"
        lines.append(f"- **{key}**: {value}")
    counts = {s: sum(c["status"] == s for c in report["claims"]) for s in STATUSES}
    lines += ["", "## Claims", "", " · ".join(f"{s}: {n}" for s, n in counts.items()), "",
              "| id | section | status | tests (passed/failed/skipped) | claim |", "|---|---|---|---|---|"]
    for c in report["claims"]:
        outcomes = [t["outcome"] for t in c["tests"]]
        tally = f"{outcomes.count('passed')}/{outcomes.count('failed')}/{outcomes.count('skipped')}"
        lines.append(f"| `{c['id']}` | {c['section']} | {c['status']} | {tally} | {c['title']} |")
    evidence = [(c["id"], t) for c in report["claims"] for t in c["tests"] if t.get("evidence")]
    if evidence:
        lines += ["", "## Evidence", ""]
        lines += [f"- `{cid}` `{t['nodeid']}`: {json.dumps(t['evidence'], ensure_ascii=False, default=str)}"
                  for cid, t in evidence]
    return "\n".join(lines) + "\n"


def terminal_table(report: dict) -> list[str]:
    """A compact table: one line per area, each claim id tagged with a one-letter status."""
    mark = {"verified": "+", "failed": "F", "skipped": "s", "untested": "."}
    lines = []
    areas: dict[str, list[str]] = {}
    for c in report["claims"]:
        areas.setdefault(c["area"], []).append(f"{mark[c['status']]}{c['id']}")
    for area, ids in areas.items():
        lines.append(f"{area:>9}: " + " ".join(ids))
    counts = {s: sum(c["status"] == s for c in report["claims"]) for s in STATUSES}
    lines.append("   claims: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                 + "   (+ verified, F failed, s skipped, . untested)")
    return lines
