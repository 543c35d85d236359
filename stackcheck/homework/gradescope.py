"""A graded run as Gradescope's autograder ``results.json``: one test entry per graded claim and per
checkpoint (``score``, ``max_score``, ``visibility``, ``output``), and one per instructor's hidden
test, whose visibility the instructor picks (``after_due_date``, say). The key never appears."""

from __future__ import annotations

import json
from pathlib import Path


def results(report: dict, hidden_paths: list[str], visibility: str = "visible") -> dict:
    """``report``: a homework run's curriculum report; ``hidden_paths``: the instructor's --tests."""
    score = report["homework"]
    tests = []
    for item in score["claims"]:
        output = f"{item['passed']}/{item['graded']} tests passed; functions: {', '.join(item['functions'])}"
        if item["status"] != "passed":
            output += f"\n{item['title']}\n{item['ko']}\n{item.get('feedback', '')}"
        tests.append(
            {
                "name": f"{item['id']} (§{item['section']})",
                "score": item["earned"],
                "max_score": item["points"],
                "visibility": "visible",
                "output": output,
            }
        )
    for q in score["checkpoints"]:
        tests.append(
            {
                "name": f"checkpoint {q['id']}",
                "score": q["earned"],
                "max_score": q["points"],
                "visibility": "visible",
                "output": "\n".join(q["feedback"]),
            }
        )
    # the instructor's tests live outside the suite's folders (their node ids may even lose the file)
    hidden = [t for c in report["claims"] for t in c["tests"] if hidden_paths and not t["nodeid"].startswith("tests_")]
    for t in hidden:
        tests.append(
            {
                "name": f"instructor test {t['nodeid']}",
                "score": 1 if t["outcome"] == "passed" else 0,
                "max_score": 0,  # its points are in its claim's entry; this entry only reports it
                "visibility": visibility,
                "output": t.get("message") or t["outcome"],
            }
        )
    return {
        "score": score["earned"],
        "max_score": score["points"],
        "output": f"score: {score['percent']:g} % ({score['earned']:g} of {score['points']:g} points)",
        "visibility": "visible",
        "tests": tests,
    }


def write(path: Path, report: dict, hidden_paths: list[str], visibility: str = "visible") -> Path:
    text = json.dumps(results(report, hidden_paths, visibility), indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path
