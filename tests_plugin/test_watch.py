"""``stackcheck watch`` (issue 36: a student's loop in seconds): an edit of one function reruns the CPU
tests that reach it, in a process that imported the stacks once, and prints the score line first."""

import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stackcheck.homework import watch
from stackcheck.impl import reference

pytestmark = pytest.mark.meta
TRIALS = 3
# issue 36: a rerun after a save skips the new process's imports. Watch over fresh, recorded on the
# 2-core CPU machine: 0.27-0.28 idle, 0.50 under CI's load; the line sits above twice that spread.
RATIO_LINE = 0.75


def test_an_edit_names_only_the_functions_it_changed(tmp_path):
    path = tmp_path / "homework.py"
    path.write_text("def numpy_steps(x, w, b):\n    return x\n\ndef numpy_forward(x, w, b):\n    return x\n")
    before = watch.functions(path)
    path.write_text(
        "def numpy_steps(x, w, b):\n    # a comment\n    return x\n\ndef numpy_forward(x, w, b):\n"
        "    return x + 0\n\ndef helper():\n    pass\n"
    )
    assert watch.changed(before, watch.functions(path)) == ["numpy_forward"]
    path.write_text("def numpy_steps(x, w, b:\n")
    assert watch.functions(path) is None and watch.changed(before, None) == []


def test_a_save_reruns_what_it_reaches_faster_than_a_fresh_pytest(tmp_path):
    """Trials interleaved (a fresh pytest of the same selection, then a save), judged on the median
    ratio: the warm process must save most of what a new process pays; too noisy is inconclusive. Fresh
    interpreters by design: a fresh pytest is what the warm process is timed against."""
    folder = tmp_path / "hw"
    folder.mkdir()
    source = Path(reference.__file__).read_text() + "\nASSIGNED = ('math',)\n"
    wrong = source.replace("return a, z, np.maximum(z, 0)", "return a, z, np.abs(z)", 1)
    assert wrong != source, "the edit must change numpy_steps"
    (folder / "homework.py").write_text(source)
    args = watch.rerun_args(folder, ["numpy_steps"], Path(reference.__file__).parents[2], None)
    command = [sys.executable, "-m", "stackcheck.cli", "watch", str(folder), "--runs", str(TRIALS)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: [lines.append((time.monotonic(), line)) for line in process.stdout])
    reader.start()
    ratios, pairs = [], []
    try:
        assert _wait(lines, lambda line: "save it" in line, 0), "".join(line for _, line in lines)
        for trial in range(TRIALS):
            start = time.monotonic()
            ran = subprocess.run([sys.executable, "-m", "pytest", *args], capture_output=True, text=True, cwd=tmp_path)
            fresh = time.monotonic() - start
            assert " passed" in ran.stdout, ran.stdout + ran.stderr
            saved = time.monotonic()
            (folder / "homework.py").write_text(wrong if trial % 2 == 0 else source)
            score = _wait(lines, lambda line: line.startswith("score:"), trial + 1)  # the whole file's first
            assert score, "".join(line for _, line in lines)
            pairs.append((round(score - saved, 2), round(fresh, 2)))
            ratios.append((score - saved) / fresh)
        assert process.wait(timeout=120) == 0
    finally:
        process.kill()
        reader.join()
    text = "".join(line for _, line in lines)
    assert "---- numpy_steps changed" in text and "FAIL S2.2-hand" in text, text
    median, spread = statistics.median(ratios), max(ratios) - min(ratios)
    print(f"watch over a fresh pytest: median {median:.2f}, spread {spread:.2f}, (watch s, fresh s) {pairs}")
    if RATIO_LINE - median < 2 * spread and median <= RATIO_LINE:
        pytest.skip(
            f"inconclusive: median ratio {median:.2f} within twice its spread {spread:.2f} "
            f"of the line {RATIO_LINE}; trials {pairs}"
        )
    assert median <= RATIO_LINE, (pairs, text)


def _wait(lines, match, count, timeout=120.0) -> float | None:
    """The time of the (count+1)-th line ``match`` accepts, waiting at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [t for t, line in list(lines) if match(line)]
        if len(found) > count:
            return found[count]
        time.sleep(0.05)
    return None


def test_a_usage_error_leaves_no_score_and_new_answers_rerun_the_file(tmp_path):
    """Issue 76: watch is pytest's twin. A save that misspells a function stops pytest with a usage
    error: watch shows it and no score (not the last one), as pytest and grade give none; the save
    that fixes it grades the whole file again; a save of answers.toml reruns it too, since the
    checkpoints are part of the score. Watch is a fresh interpreter by design: the student's process."""
    folder = tmp_path / "hw"
    folder.mkdir()
    source = Path(reference.__file__).read_text() + "\nASSIGNED = ('math',)\n"
    misspelt = source.replace("def numpy_forward(", "def numpy_forwrd(", 1)
    assert misspelt != source
    (folder / "homework.py").write_text(source)
    command = [sys.executable, "-m", "stackcheck.cli", "watch", str(folder), "--runs", "3", "-k", "test_s2_2_hand"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: [lines.append((time.monotonic(), line)) for line in process.stdout])
    reader.start()
    try:
        assert _wait(lines, lambda line: "save it" in line, 0), "".join(line for _, line in lines)
        (folder / "homework.py").write_text(misspelt)
        assert _wait(lines, lambda line: line.startswith("no score"), 0), "".join(line for _, line in lines)
        (folder / "homework.py").write_text(source)
        assert _wait(lines, lambda line: line.startswith("score:"), 1), "".join(line for _, line in lines)
        (folder / "answers.toml").write_text("# no answers yet\n")
        assert _wait(lines, lambda line: "---- answers.toml changed" in line, 0), "".join(line for _, line in lines)
        assert process.wait(timeout=300) == 0
    finally:
        process.kill()
        reader.join()
    text = "".join(line for _, line in lines)
    after_error = text.split("no score", 1)[1].split("----", 1)[0]
    assert "score:" not in after_error and "not surface name(s): numpy_forwrd" in text, text
    assert text.count("score:") >= 3, text
