"""What to revisit (fixtures/hints.toml) is read from what a failure says, never from the test source
its traceback quotes: every claim test's source line that a hint's pattern matches, quoted above a
failing line whose message is another, points nowhere; the same words as the failure's message
point to that hint."""

import re
from pathlib import Path

import pytest

from stackcheck.claims import catalogue

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
CLAIM_FOLDERS = ("tests_math", "tests_ir", "tests_runtime", "tests_kernels", "tests_hardware", "tests_course")


def quoted_lines() -> list[tuple[str, str]]:
    """(hint's claim, a source line of a claim test that its pattern matches), as pytest quotes it."""
    found = []
    for folder in CLAIM_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line in path.read_text(encoding="utf-8").splitlines():
                found += [(h["claim"], line.strip()) for h in catalogue.hints() if h["regex"].search(line.strip())]
    return found


def failure(context: str, message: str) -> str:
    """A failure as pytest's long traceback writes it: ``context`` quoted above the failing line."""
    return "\n".join(
        [
            "    def test_x():",
            f"    {context}",
            ">       assert check()",
            f"E       AssertionError: {message}",
            "x.py:3: Error",
        ]
    )


def test_a_hint_is_read_from_the_failures_message_not_from_the_quoted_source():
    pairs = quoted_lines()
    assert pairs, "no claim test's source matches a hint here: nothing to check (the scan reads no file?)"
    steered = [(claim, line) for claim, line in pairs if catalogue.revisit(failure(line, "2 != 3"), [])]
    assert not steered, f"these quoted source lines point a failure to their hint: {steered[:5]}"
    unread = [
        (claim, line) for claim, line in pairs if claim not in dict(catalogue.revisit(failure("x = 1", line), []))
    ]
    assert not unread, f"these failure messages point nowhere: {unread[:5]}"


def test_the_failing_line_itself_is_read():
    """A student's failing line (pytest marks it with >) is part of what the failure says: MC01's
    data-dependent `if` is found there."""
    text = "    def forward(x):\n>       if np.any(x < 0):\nE       jax.errors.TracerBoolConversionError: ..."
    assert re.search(r"\bMC01\b", " ".join(cid for cid, _ in catalogue.revisit(text, [])))
