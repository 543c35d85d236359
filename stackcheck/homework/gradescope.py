"""A graded run as Gradescope's autograder ``results.json``: one test entry per graded claim and per
checkpoint (``score``, ``max_score``, ``visibility``, ``output``), and one per instructor's hidden
test, whose visibility the instructor picks (``after_due_date``, say), carrying its share of its
claim's points. The key never appears."""

from __future__ import annotations

import json
from pathlib import Path

from stackcheck.claims.results import Report, TestResult
from stackcheck.homework import scoring


def _entry(name: str, score: float, max_score: float, output: str, visibility: str = "visible") -> dict:
    return {"name": name, "score": score, "max_score": max_score, "visibility": visibility, "output": output}


def results(report: Report, withheld: list[dict], visibility: str = "visible") -> dict:
    """``report``: a graded run's curriculum report; ``withheld``: the instructor's tests it ran,
    withheld from the report (scoring.withhold_instructor_tests). A claim's points are shared by its
    graded tests: the suite's tests' share is the claim's visible entry, and each instructor's
    test's share its own entry with ``visibility``, saying only whether it passed: its message (its
    inputs, what the student's code printed) is the instructor's alone."""
    score = report.homework
    tests = []
    for item in score.claims:
        hidden = scoring.graded_tests([TestResult.from_json(t) for t in withheld if t["claim"] == item.id])
        share = item.points / item.graded
        shown_ran = item.graded - len(hidden)
        shown_passed = item.passed - sum(t.outcome == "passed" for t in hidden)
        output = f"{shown_passed}/{shown_ran} tests passed; functions: {', '.join(item.functions)}"
        if shown_passed < shown_ran:
            output += f"\n{item.title}\n{item.ko}\n{item.feedback or ''}"
        if shown_ran:
            name = f"{item.id} (§{item.section})"
            tests.append(_entry(name, round(share * shown_passed, 2), share * shown_ran, output))
        for k, t in enumerate(hidden, 1):  # named by its place, never its name: the student's file shows it
            earned = round(share, 2) if t.outcome == "passed" else 0
            said = t.outcome.value if t.outcome == "passed" else f"{t.outcome.value}: {scoring.HIDDEN_FAILED}"
            tests.append(_entry(f"{item.id}: instructor test {k}", earned, share, said, visibility))
    for q in score.checkpoints:
        tests.append(_entry(f"checkpoint {q.id}", q.earned, q.points, "\n".join(q.feedback)))
    return {
        "score": score.earned,
        "max_score": score.points,
        "output": f"score: {score.percent:g} % ({score.earned:g} of {score.points:g} points)",
        "visibility": "visible",
        "tests": tests,
    }


def write(path: Path, report: Report, withheld: list[dict], visibility: str = "visible") -> Path:
    text = json.dumps(results(report, withheld, visibility), indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
    return path
