"""The course as data: the claim catalogue (fixtures/claims.toml) and the curriculum report."""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path

from stackcheck.claims.results import ClaimResult, Report, TestResult, status_of
from stackcheck.paths import data


def catalogue_path() -> Path:
    return data.path("fixtures", "claims.toml")


@functools.cache
def catalogue() -> dict[str, dict]:
    with open(catalogue_path(), "rb") as f:
        entries = tomllib.load(f)["claim"]
    return {entry["id"]: entry for entry in entries}


@functools.cache
def chapters() -> dict[str, str]:
    """The course's chapter titles by number ("6" -> its title), verbatim (fixtures/chapters.toml)."""
    with open(data.path("fixtures", "chapters.toml"), "rb") as f:
        return tomllib.load(f)["chapter"]


@functools.cache
def hints() -> list[dict]:
    with open(data.path("fixtures", "hints.toml"), "rb") as f:
        return [{**h, "regex": re.compile(h["pattern"])} for h in tomllib.load(f)["hint"]]


def revisit(failure: str, claimed: list[str]) -> list[tuple[str, str]]:
    """(id, why) pointers for a failure of a test of ``claimed``, the likeliest first: the claims and
    misconceptions its text points to (fixtures/hints.toml, first match first), then the test's own
    claims. A shape test failing on a broadcast error points to §2.3 before §2.1. Read is what the
    failure says, not the source its traceback quotes around the failing line (indented four spaces):
    an assertion's message written above the one that failed would point there."""
    known = catalogue()
    said = "\n".join(line for line in failure.splitlines() if not line.startswith("    "))
    found = [(h["claim"], h["why"]) for h in hints() if h["regex"].search(said)]
    found += [(cid, known[cid].get("misconception") or known[cid]["title"]) for cid in claimed if cid in known]
    seen: set[str] = set()
    return [(cid, why) for cid, why in found if not (cid in seen or seen.add(cid))]


def pointer(cid: str, why: str) -> str:
    """One pointer of ``revisit`` as the learner reads it: ``§2.3 [S2.3-broadcast]: why``."""
    return f"§{catalogue()[cid]['section']} [{cid}]: {why}"


def revisit_line(cid: str, why: str) -> str:
    """The line naming what to revisit first (one pointer of ``revisit``)."""
    return f"Revisit first, course {pointer(cid, why)}"


def course_pointer(ids: list[str]) -> list[str]:
    """Lines sending a learner back to the course: each claim's section, title and the course's words."""
    known = catalogue()
    lines = []
    for cid in ids:
        entry = known.get(cid)
        if entry is None:
            continue
        lines.append(f"Course §{entry['section']} [{cid}]: {entry['title']}")
        lines.append(f"  본문: {entry['ko']}")
    return lines


def build_report(results: list[tuple[list[str], TestResult]], environment: dict) -> Report:
    """``results``: (the claims it proves, its result) for every test that ran.

    A claim's status comes from the tests that count: those that exercise the implementation
    under test or run a stack. Demonstrations (``counts`` False) are listed but decide nothing.
    Tests proving no claim (the suite's meta-tests) are listed under ``other_tests``."""
    ordered = sorted(results, key=lambda found: found[1].nodeid)
    claims = []
    for cid, entry in catalogue().items():
        tests = [t for ids, t in ordered if cid in ids]
        claims.append(
            ClaimResult(
                id=cid,
                section=entry["section"],
                title=entry["title"],
                area=entry["area"],
                kind=entry.get("kind", "learner"),
                status=status_of([t for t in tests if t.counts]),
                tests=tests,
            )
        )
    return Report(environment=environment, claims=claims, other_tests=[t for ids, t in ordered if not ids])


def claim_files(root: Path) -> dict[str, list[str]]:
    """Each claim id -> the test files under ``root`` whose tests say ``claim("ID")``."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.glob("tests_*/test_*.py")):
        for cid in re.findall(r'claim\("([^"]+)"\)', path.read_text(encoding="utf-8")):
            found.setdefault(cid, set()).add(path.relative_to(root).as_posix())
    return {cid: sorted(files) for cid, files in found.items()}


def readme_table(root: Path) -> list[str]:
    """docs/catalogue.md's table: every claim of the catalogue, its section, title and test files."""
    files = claim_files(root)
    lines = ["| id | § | about | claim | tests |", "|---|---|---|---|---|"]
    for cid, entry in catalogue().items():
        tests = ", ".join(f"`{f}`" for f in files.get(cid, [])) or "(none)"
        about = f"the stacks: {entry['kind_reason']}" if entry.get("kind") == "stack-fact" else "the code under test"
        lines.append(f"| `{cid}` | {entry['section']} | {about} | {entry['title']} | {tests} |")
    return lines


def write_table(root: Path) -> Path:
    """Rewrite docs/catalogue.md's table (between its claims markers) from the catalogue and the tests."""
    page = root / "docs" / "catalogue.md"
    text = page.read_text(encoding="utf-8")
    start, end = "<!-- claims:start -->", "<!-- claims:end -->"
    if start not in text or end not in text:
        raise SystemExit(f"{page}: no {start} ... {end} markers to write the table between")
    head, rest = text.split(start, 1)
    table = "\n".join(readme_table(root))
    page.write_text(f"{head}{start}\n{table}\n{end}{rest.split(end, 1)[1]}", encoding="utf-8")
    return page


if __name__ == "__main__":  # python -m stackcheck.claims.catalogue [--write]: docs/catalogue.md's claim table
    import sys

    if "--write" in sys.argv[1:]:
        print(f"wrote {write_table(Path.cwd())}")
    else:
        print("\n".join(readme_table(Path.cwd())))
