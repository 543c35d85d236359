"""One score everywhere (issue 52): the same homework file earns the same points from ``pytest
--homework``, from ``stackcheck watch`` (its whole-file grade, kept up to date by reruns) and from
``stackcheck grade`` (a judge that never holds the code). All three score with
stackcheck.homework.scoring.score; this runs the three, each in a fresh interpreter as a student or an
instructor types it (a command's own start-up, its options and plugins, is part of what is compared), and
compares what they print and write."""

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.grading import grader
from stackcheck.impl import reference

pytestmark = [pytest.mark.meta, pytest.mark.usefixtures("bubblewrap")]
SCORE = re.compile(r"^score: ([\d.]+) % \(([\d.]+) of ([\d.]+) points\)", re.M)


def _score(text: str) -> tuple[float, float, float]:
    found = SCORE.search(text)
    assert found, text[-3000:]
    return tuple(float(v) for v in found.groups())


@pytest.mark.grading_trial
def test_pytest_watch_and_grade_give_one_file_the_same_score(tmp_path):
    folder = tmp_path / "subs" / "dana"
    folder.mkdir(parents=True)
    source = Path(reference.__file__).read_text() + "\nASSIGNED = ('math',)\n"
    wrong = source.replace("return a, z, np.maximum(z, 0)", "return a, z, np.abs(z)", 1)
    assert wrong != source
    (folder / "homework.py").write_text(wrong)
    root = grader.suite_root()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", f"--homework={folder}", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    local = _score(run.stdout)
    watched = subprocess.run(
        [sys.executable, "-m", "stackcheck.cli", "watch", str(folder), "--runs", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert watched.returncode == 0, watched.stdout[-3000:] + watched.stderr[-2000:]
    watch_score = _score(watched.stdout)
    out = tmp_path / "grades.csv"
    graded = subprocess.run(
        [sys.executable, "-m", "stackcheck.cli", "grade", str(folder.parent), "--out", str(out), "--part", "math"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-2000:]
    row = next(csv.DictReader(out.open()))
    grade_score = (float(row["percent"]), float(row["earned"]), float(row["points"]))
    print(f"pytest --homework {local}, watch {watch_score}, grade {grade_score}")
    assert 0 < local[0] < 100, f"the file must be partly right to tell the three apart: {local}"
    assert local == watch_score == grade_score, f"pytest {local}, watch {watch_score}, grade {grade_score}"
