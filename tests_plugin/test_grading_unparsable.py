"""Issue 52 item 8: grading says what it does as it goes, and a file that does not parse is that
student's 0 with its line: one line per submission as it finishes (a progress count, the score, the
seconds), its own results.json, HTML page and CSV row (no empty cell), and a first screen that says
"does not parse: homework.py line N" with no path of the grader's; and it warms no compile cache,
since it runs no test."""

import csv
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.meta

BROKEN = 'ASSIGNED = ("math",)\n\n\ndef numpy_forward(x, w, b):\n    return (x @ w + b\n'


def test_a_file_that_does_not_parse_is_graded_at_once_with_its_line(tmp_path, bubblewrap):
    """A fresh process: `stackcheck grade` as an instructor runs it, its command line included."""
    submissions = tmp_path / "subs"
    (submissions / "bob").mkdir(parents=True)
    (submissions / "bob" / "homework.py").write_text(BROKEN)
    out = tmp_path / "out" / "grades.csv"
    command = [sys.executable, "-m", "stackcheck.cli", "grade", str(submissions), "--out", str(out), "--jobs", "2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "compile caches none: no submission parses, so none runs a test" in said, said[-2000:]
    line = next(row for row in said.splitlines() if "[1/1] bob:" in row)
    assert "0 % (does not parse: homework.py line 5:" in line and line.rstrip().endswith(" s"), line
    results = json.loads((out.parent / "grades-feedback" / "bob.results.json").read_text())
    assert results["score"] == 0 and results["output"].startswith("does not parse: homework.py line 5:"), results
    first_screen = (out.parent / "grades-feedback" / "bob.md").read_text().splitlines()[:5]
    assert any(row.startswith("does not parse: homework.py line 5:") for row in first_screen), first_screen
    page = (out.parent / "grades-feedback" / "bob.html").read_text()
    assert "score: 0 %" in page and "does not parse: homework.py line 5:" in page, page
    with open(out, newline="", encoding="utf-8") as f:
        (row,) = csv.DictReader(f)
    assert row["points"] != "" and row["percent"] == "0", row
    assert str(tmp_path) not in "\n".join(first_screen) + results["output"], "no path of the grader's"
