"""Every rerun line a homework view prints runs where it is read (issue 76 items 1 and 5): the score
of a run from the checkout (read there), of a run from inside the homework folder (read there), of
a graded run (read later in the student's own folder, on a machine where the suite lies elsewhere)
and of ``stackcheck watch`` (read in the student's terminal after watch has ended). Each line is
executed as printed, by a shell in a fresh Python (a student pastes it into a terminal), from where
it is read; it must run that one test and fail it, as the view did."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from stackcheck.claims.results import Report
from stackcheck.homework import scoring

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
SELECT = "test_hand_example_a_z_y_exact and numpy"  # one failing test of the abs-ReLU homework, in a second
ABS_RELU = (
    "import numpy as np\n\nASSIGNED = ('math',)\n\n\ndef check_operands(x, w, b):\n    return None\n\n\n"
    "def numpy_steps(x, w, b):\n    a = x @ w\n    z = a + b\n    return a, z, np.abs(z)\n"
)


@pytest.fixture
def homework():
    """A homework folder inside the checkout, where `stackcheck homework init hw` puts it."""
    folder = Path(tempfile.mkdtemp(prefix=".hw-", dir=ROOT))
    (folder / "homework.py").write_text(ABS_RELU)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def pytest_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest started as a student starts it, from ``cwd``: a fresh Python, this one's packages."""
    command = [sys.executable, "-m", "pytest", "-p", "no:randomly", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


def reruns(text: str) -> list[str]:
    lines = [m.group(1) for m in re.finditer(r"^\s*rerun: (.+)$", text, re.MULTILINE)]
    assert lines, f"the view printed no rerun line:\n{text[-3000:]}"
    return lines


def pasted(line: str, where: Path) -> str:
    """What a shell prints running ``line`` in ``where``, ``python`` being this Python."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(line, shell=True, cwd=where, env=env, capture_output=True, text=True, timeout=600)
    said = done.stdout + done.stderr
    assert re.search(r"\b1 failed\b", said) and not re.search(r"\d+ (passed|error)", said), (
        f"pasted in {where}:\n  {line}\nit should run that one test and fail it; it printed:\n{said[-3000:]}"
    )
    return said


def test_a_run_from_the_checkout_prints_lines_that_run_there(homework):
    done = pytest_in(ROOT, f"--homework={homework.relative_to(ROOT)}", "-k", SELECT)
    for line in reruns(done.stdout):
        pasted(line, ROOT)


def test_a_run_from_the_homework_folder_prints_lines_that_run_there(homework):
    done = pytest_in(homework, "--homework=.", "-k", SELECT)
    for line in reruns(done.stdout):
        pasted(line, homework)


def test_graded_feedback_prints_lines_that_run_in_the_students_own_folder(homework, tmp_path):
    """The judge's invocation (stackcheck grade's: its checkout's folders named, --homework-graded);
    the feedback read in a copy of the student's folder outside any checkout."""
    report = tmp_path / "graded.json"
    args = [f"--homework={homework}", "--homework-graded", "-k", SELECT, f"--curriculum-report={report}"]
    pytest_in(ROOT, *args, f"--rootdir={ROOT}", str(ROOT / "tests_math"))
    student = tmp_path / "student"
    shutil.copytree(homework, student)
    feedback = "\n".join(scoring.lines(Report.load(report).homework))
    for line in reruns(feedback):
        assert str(ROOT) not in line, f"a graded line names the grader's checkout: {line}"
        pasted(line, student)


def test_watch_prints_lines_that_run_after_it_ends(homework, tmp_path):
    """``stackcheck watch`` for one pass (its own process, as a student starts it); its lines pasted in
    the homework folder once watch and its scratch folder are gone."""
    code = (
        "from pathlib import Path; from stackcheck.homework import watch; "
        f"watch.watch(Path({str(homework)!r}), Path({str(ROOT)!r}), runs=0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    for line in reruns(done.stdout):
        pasted(line, homework)
