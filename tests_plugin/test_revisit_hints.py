"""What to revisit (fixtures/hints.toml) is read from what a failure says, never from the test source
its traceback quotes: every claim test's source line that a hint's pattern matches, quoted above a
failing line whose message is another, points nowhere; the same words as the failure's message
point to that hint."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


HINTS = catalogue.hints()
STYLES = ("auto", "no", "short", "line", "native")  # every --tb a view passes (whole-part runs and watch: no)
printable = st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))  # a message's one line


def revisits(pytester, style: str) -> dict[str, str | None]:
    """Each test's first pointer, from a run with ``--tb=style``'s curriculum report."""
    report = pytester.path / f"{style}.json"
    pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--tb={style}", f"--curriculum-report={report}")
    found = json.loads(report.read_text(encoding="utf-8"))
    return {t["nodeid"]: (t.get("revisit") or {}).get("id") for c in found["claims"] for t in c["tests"]}


@given(
    st.lists(
        st.sampled_from(HINTS).flatmap(lambda h: st.from_regex(h["regex"], alphabet=printable)),
        min_size=1,
        max_size=8,
    )
)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")  # the inner runs' profiles
def test_a_failure_points_to_one_hint_in_every_view(pytester, said):
    """Issue 76 item 2: a failure whose message says a hint's words on any of its lines points there
    first in every view: alone (pytest's long traceback), a whole-part run and watch (--tb=no, which
    indents a message's later lines like quoted source), --tb=short, line and native alike."""
    messages = [f"the check failed\n{line}" for line in said]
    pytester.makepyfile(
        test_fails="import pytest\n"
        f"MESSAGES = {messages!r}\n"
        "@pytest.mark.claim('S2.1-shapes')\n"
        "@pytest.mark.parametrize('i', range(len(MESSAGES)))\n"
        "def test_fails(i):\n"
        "    raise AssertionError(MESSAGES[i])\n"
    )
    views = {style: revisits(pytester, style) for style in STYLES}
    alone = views["auto"]
    assert len(alone) == len(messages) and all(alone.values()), alone
    for i, line in enumerate(said):
        expected = catalogue.revisit(f"E   AssertionError: {line}", [])[0][0]
        assert alone[f"test_fails.py::test_fails[{i}]"] == expected, (line, alone)
    for style, found in views.items():
        assert found == alone, f"--tb={style} points elsewhere than the test run alone: {found} != {alone}"
