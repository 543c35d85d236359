"""A graded run as Gradescope's autograder ``results.json``: one test entry per graded claim and per
checkpoint (``score``, ``max_score``, ``visibility``, ``output``), and one per instructor's hidden
test, whose visibility the instructor picks (``after_due_date``, say). The key never appears."""

from __future__ import annotations

import json
from pathlib import Path


def _entry(name: str, score: float, max_score: float, output: str, visibility: str = "visible") -> dict:
    return {"name": name, "score": score, "max_score": max_score, "visibility": visibility, "output": output}


def results(report: dict, instructor_tests: bool, visibility: str = "visible") -> dict:
    """``report``: a homework run's curriculum report; ``instructor_tests``: whether --tests added any."""
    score = report["homework"]
    tests = []
    for item in score["claims"]:
        output = f"{item['passed']}/{item['graded']} tests passed; functions: {', '.join(item['functions'])}"
        if item["status"] != "passed":
            output += f"\n{item['title']}\n{item['ko']}\n{item.get('feedback', '')}"
        tests.append(_entry(f"{item['id']} (§{item['section']})", item["earned"], item["points"], output))
    for q in score["checkpoints"]:
        tests.append(_entry(f"checkpoint {q['id']}", q["earned"], q["points"], "\n".join(q["feedback"])))
    # the instructor's tests live outside the suite's folders (their node ids may even lose the file);
    # their points are in their claims' entries, these entries (max_score 0) only report them
    hidden = [
        t for c in report["claims"] for t in c["tests"] if instructor_tests and not t["nodeid"].startswith("tests_")
    ]
    for t in hidden:
        passed = 1 if t["outcome"] == "passed" else 0
        tests.append(_entry(f"instructor test {t['nodeid']}", passed, 0, t.get("message") or t["outcome"], visibility))
    return {
        "score": score["earned"],
        "max_score": score["points"],
        "output": f"score: {score['percent']:g} % ({score['earned']:g} of {score['points']:g} points)",
        "visibility": "visible",
        "tests": tests,
    }


def write(path: Path, report: dict, instructor_tests: bool, visibility: str = "visible") -> Path:
    text = json.dumps(results(report, instructor_tests, visibility), indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path
