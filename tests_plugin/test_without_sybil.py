"""A learner's GPU without Sybil (the course gate's extra): every test that reads the course's listings
(found here by what it imports, so the next one is found too) skips with the install hint, never
fails; ``--require sybil`` makes the skip a failure."""

import ast
import os
import re
import subprocess
import sys

import pytest

from stackcheck.grading import grader

pytestmark = pytest.mark.meta
ROOT = grader.suite_root()
BLOCKER = "raise ImportError('No module named sybil (blocked by the self-test)')\n"


def readers() -> list[str]:
    """The claim and meta test files that import stackcheck.course (the listings, the §11.2 wrapper)."""
    found = []
    for path in sorted(ROOT.glob("tests_*/test_*.py")):
        if path.parent.name == "tests_plugin":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        if any(name.startswith("stackcheck.course") for name in names):
            found.append(str(path.relative_to(ROOT)))
    return found


def test_the_tests_that_read_the_course_skip_without_sybil(tmp_path):
    """A fresh interpreter whose import path blocks Sybil: this process has imported it."""
    files = readers()
    assert len(files) >= 3, files  # S9.3's names, S11.2's contract, the inline mutant of S11.2
    blocked = tmp_path / "blocked" / "sybil"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text(BLOCKER)
    # this environment (where this Python finds its packages: a user install's PYTHONUSERBASE) but pytest's own
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocked.parent), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", *files, "-m", "cpu", "-p", "no:cacheprovider", "-q", "-rs"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode in (0, 5) and not re.search(r"[1-9]\d* (failed|error)", out), out[-4000:]
    required = subprocess.run(  # its first failure says it all: -x
        [*command, "-x", "--require", "sybil"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert "--require sybil" in required.stdout and required.returncode == 1, required.stdout[-3000:]
