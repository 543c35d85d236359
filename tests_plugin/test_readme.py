"""The README's commands are the ones that run: its set-up is what .ci/run does, and its first run
verifies the claim it names."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent


def readme_blocks() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [block.strip().splitlines() for block in re.findall(r"```bash\n(.*?)```", text, re.S)]


def test_the_set_up_is_what_ci_runs():
    set_up = readme_blocks()[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in set_up:
        assert command in ci, f"README's set-up command is not in .ci/run: {command}"


def test_the_first_run_verifies_its_claim(tmp_path):
    """The README's command run as printed, in a fresh interpreter, as a newcomer runs it."""
    (command,) = readme_blocks()[1]
    args = shlex.split(command)
    assert args[:3] == ["python3", "-m", "pytest"], command
    report = tmp_path / "first.json"
    done = subprocess.run(
        [sys.executable, *args[1:], "-p", "no:cacheprovider", f"--curriculum-report={report}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"\+ verified +S2\.2-hand ", done.stdout), done.stdout[-2000:]
