"""Claims: the catalogue holds the course's ids; tests declare them; the report counts them."""

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.claims import catalogue
from stackcheck.claims.results import Outcome, Status, TestResult, lacks, status_of

pytestmark = pytest.mark.meta
ROOT = Path(__file__).resolve().parent.parent

EAGER = "numpy-cpu or torch-cpu"  # the eager variants: fast, and nothing compiled in-process

IDS = {
    "math": "S2.1-shapes S2.2-hand S2.3-broadcast S2.1-linear S2.4-specialize S8.1-backend S8.2-grads S8.4-grad-mode "
    "S9.5-grads X-numerics MC13 S9.5-grad-ir S4.1-jax-control",
    "ir": "S3.1-decompose S3.2-variants S9.7-llo S1.2-abstract S1.2-static S4.3-ir S9.3-hlo S5.1-dce "
    "S5.1-constfold S5.1-layout "
    "S5.2-fma S5.2-fusion Q1 MC01 MC02 MC03 MC12 "
    "S4.4-graph-break S10.2-record S10.3-compile-init S8.3-export-vs-dynamo S4.2-ir-levels S5.1-target S5.2-too-big "
    "S4.1-memory S9.4-relu-call S4.1-loops S5.1-buffers S5.1-passes S9.3-backends S9.3-version-names",
    "runtime": "S6.1-runtime MC06 MC07 MC09 Q2 S6.3-shape S6.5-regimes S6.2-resident S6.4-order S9.1-pjrt "
    "S1.2-eager-library S6.4-no-overlap S10.3-gpu S6.1-donate S12.4-dynamic S6.2-shared-memory S9.6-host-overhead "
    "S6.4-sync-idle S10.5-order S10.5-stale-copy S9.6-put-async",
    "kernels": "S11.2-mask S11.2-guard S11.3-program S11.4-scope S10.4-custom S10.5-mojo-gpu S12.1-pallas MC10 "
    "S10.4-special S10.4-gpu-target S10.1-not-python S10.4-out-types S11.3-async S11.2-contract S10.4-width "
    "S10.3-no-backward S10.4-not-faster",
    "hardware": "MC04 MC05 MC08 Q3 Q5 S7.2-hierarchy S7.3-tpu S5.3-tiling S3.1-flash S2.3-split S12.5-perf-portability "
    "S12.4-bottleneck S4.1-accelerator S7.2-l1 S7.2-shared S7.1-execution-model S10.5-block "
    "S7.2-memory-kind",
    "course": "MC11 Q4 S14.4-repro S14.3-env",
}


def test_catalogue_has_every_course_claim_once_with_its_wording():
    claims = catalogue.catalogue()
    expected = {cid: area for area, ids in IDS.items() for cid in ids.split()}
    assert set(claims) == set(expected), set(claims) ^ set(expected)
    for cid, entry in claims.items():
        assert entry["area"] == expected[cid], cid
        assert entry["section"] and entry["title"] and entry["ko"], cid
        assert isinstance(entry["points"], int) and entry["points"] >= 1, f"{cid}: points for homework scores"
        assert any("\uac00" <= ch <= "\ud7a3" for ch in entry["ko"]), f"{cid}: ko must quote the Korean course"
    misconceptions = [cid for cid in claims if cid.startswith("MC")]
    assert sorted(misconceptions) == [f"MC{i:02d}" for i in range(1, 14)]
    assert all("misconception" in claims[cid] for cid in misconceptions)
    assert not [cid for cid, e in claims.items() if "revisit" in e], "what to revisit comes from fixtures/hints.toml"
    assert all(h["claim"] in claims for h in catalogue.hints()), "every hint points to an id of the catalogue"


def test_unknown_claim_id_fails_and_unclaimed_test_is_listed(pytester):
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.claim('S99-nothing')\ndef test_unknown():\n    pass\n"
        "def test_unclaimed():\n    pass\n"
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*unknown claim id(s) ['S99-nothing']*",
            "*tests that prove no claim*",
            "*test_unclaimed*",
            "*FAIL unknown claim id(s): S99-nothing*",
        ]
    )


def test_curriculum_report_json_and_markdown(pytester, suite_file, tmp_path):
    path = tmp_path / "report.json"
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"), "-k", EAGER, "-p", "no:cacheprovider", f"--curriculum-report={path}"
    )
    result.assert_outcomes(passed=2)
    report = json.loads(path.read_text(encoding="utf-8"))
    assert {"date", "os", "cpu", "accelerator", "driver", "python", "versions", "backends", "precision"} <= set(
        report["environment"]
    )
    by_id = {c["id"]: c for c in report["claims"]}
    assert set(by_id) == set(catalogue.catalogue())
    hand = by_id["S2.2-hand"]
    assert hand["status"] == "verified" and hand["section"] == "2.2"
    assert {t["outcome"] for t in hand["tests"]} == {"passed"} and {t["device"] for t in hand["tests"]} == {"cpu"}
    assert all(c["status"] == "untested" for cid, c in by_id.items() if cid != "S2.2-hand")
    markdown = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "| `S2.2-hand` | 2.2 | learner | verified | 2/0/0/0/0 |" in markdown
    result.stdout.fnmatch_lines(
        [
            "*stackcheck: course claims*",
            "     math  + verified     S2.2-hand  §2.2  The hand-computed example*",
            f"   claims: 1 verified, 0 failed, 0 skipped, {len(catalogue.catalogue()) - 1} untested*",
        ]
    )


@pytest.mark.parametrize("every", [[], ["-v"], ["--claims", "all"]], ids=["selected", "verbose", "claims-all"])
def test_the_claims_table_lists_what_the_run_selected_with_the_status_a_column(pytester, suite_file, every):
    """Issue 52: one selected claim listed, not 102 to say that 101 are untested (all of them with -v
    or --claims all); the status is a column of its own, and no row is wider than the table's width."""
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"), "-k", EAGER, "-p", "no:cacheprovider", *every
    )
    result.assert_outcomes(passed=2)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "stackcheck: course claims" in line) + 1
    table = [
        line
        for line in lines[start : next(i for i, line in enumerate(lines) if line.startswith("   claims: "))]
        if line
    ]
    rows = [re.match(r"^ *(\w+)  (\S) (\w+) +(\S+) +§", line) for line in table]
    assert all(rows) and all(len(line) <= 120 for line in table), table
    listed = {row.group(4): (row.group(2), row.group(3)) for row in rows}
    if every:
        assert len(listed) == len(catalogue.catalogue()) and listed["S2.3-split"] == (".", "untested")
    else:
        assert listed == {"S2.2-hand": ("+", "verified")}, table
        result.stdout.fnmatch_lines(["   listed: the 1 claim(s) this run selected; -v or --claims all lists all *"])


def tests_of(*outcomes: str, checks: str | None = None) -> list[TestResult]:
    return [TestResult(nodeid=f"t{i}", outcome=o, device="cpu", checks=checks) for i, o in enumerate(outcomes)]


def test_status_rules():
    assert status_of([]) == "untested"
    assert status_of(tests_of("skipped", "skipped")) == "skipped"
    assert status_of(tests_of("passed", "skipped")) == "verified"
    assert status_of(tests_of("passed", "failed")) == "failed"
    assert status_of(tests_of("passed", "interrupted")) == "interrupted"
    assert status_of(tests_of("xfailed")) == "untested", "a known upstream defect neither verifies nor fails"
    assert status_of(tests_of("passed", "xfailed")) == "verified"
    instrument = tests_of("passed", checks="the gathers return the table")
    assert status_of(instrument + tests_of("skipped")) == "partly", "an instrument alone never verifies (issue 75)"
    assert status_of(instrument + tests_of("passed")) == "verified"
    assert status_of(tests_of("failed", checks="the product is exact") + tests_of("passed")) == "failed"
    assert lacks(instrument + [TestResult("t9", "skipped", "cuda", reason="ncu's counters refused")]) == (
        "ncu's counters refused"
    )


@given(st.lists(st.tuples(st.sampled_from(list(Outcome)), st.booleans()), max_size=6))
def test_a_claim_is_verified_only_by_a_passing_test_that_shows_its_statement(drawn):
    """Issue 75: whatever its tests' outcomes, a claim is verified exactly when nothing failed or was cut
    short and some test that shows the statement (no ``checks``) passed."""
    tests = [TestResult(f"t{i}", o, "cpu", checks="an instrument" if c else None) for i, (o, c) in enumerate(drawn)]
    bad = {t.outcome for t in tests} & {Outcome.FAILED, Outcome.INTERRUPTED}
    shown = any(t.outcome == Outcome.PASSED and not t.checks for t in tests)
    assert (status_of(tests) == Status.VERIFIED) == (shown and not bad)
    if status_of(tests) == Status.PARTLY:
        assert not bad and not shown and any(t.outcome == Outcome.PASSED for t in tests)


def test_require_claims_fails_the_run_when_claims_are_untested(pytester, suite_file):
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"), "-k", EAGER, "-p", "no:cacheprovider", "--require-claims"
    )
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*FAIL --require-claims: {len(catalogue.catalogue()) - 1} claim(s) not verified*"])


CLAIMED = """
import pytest
from hypothesis import given
from hypothesis import strategies as st

@pytest.mark.claim("S2.2-hand")
def test_hand(impl):
    {body}
"""


def _report(pytester, body, *args):
    pytester.makepyfile(CLAIMED.format(body=body))
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--curriculum-report=r.json", *args, no_reraise_ctrlc=True
    )
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    return result, next(c for c in report["claims"] if c["id"] == "S2.2-hand")


def test_an_interrupted_test_verifies_nothing(pytester):
    """Ctrl-C in the middle of a call: the test did not pass, so its claim is not verified."""
    result, hand = _report(pytester, "raise KeyboardInterrupt")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert hand["status"] == "interrupted" and hand["tests"][0]["outcome"] == "interrupted", hand


def test_a_strict_xfail_is_reported_as_xfailed_not_skipped(pytester):
    result, hand = _report(pytester, "pytest.xfail('a known upstream defect')")
    assert hand["tests"][0]["outcome"] == "xfailed" and hand["status"] == "untested", hand


def test_a_demonstration_is_listed_but_never_counted(pytester):
    pytester.makepyfile("""
import pytest
from hypothesis import given
from hypothesis import strategies as st

@pytest.mark.claim("S2.2-hand")
@pytest.mark.demo
def test_shows(impl):
    pass

@pytest.mark.claim("S2.3-broadcast")
def test_touches_nothing():
    pass
""")
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--curriculum-report=r.json").assert_outcomes(passed=2)
    by_id = {c["id"]: c for c in json.loads((pytester.path / "r.json").read_text())["claims"]}
    for cid in ("S2.2-hand", "S2.3-broadcast"):
        assert by_id[cid]["status"] == "untested" and by_id[cid]["tests"][0]["counts"] is False, by_id[cid]
    assert "Demonstrations (listed, not counted)" in (pytester.path / "r.md").read_text()


def test_report_path_may_name_the_markdown(pytester):
    """--curriculum-report x.md writes x.md as Markdown and x.json as JSON, never JSON over Markdown."""
    pytester.makepyfile(CLAIMED.format(body="pass"))
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--curriculum-report=out/x.md").assert_outcomes(passed=1)
    assert (pytester.path / "out/x.md").read_text().startswith("# stackcheck curriculum report")
    assert json.loads((pytester.path / "out/x.json").read_text())["claims"]


@pytest.mark.parametrize("where", ["folder", "unwritable"])
def test_a_bad_report_path_is_a_usage_error_before_any_test(pytester, where):
    pytester.makepyfile(CLAIMED.format(body="pass"))
    target = pytester.path / "taken"
    target.mkdir()
    if where == "unwritable":
        (target / "inner").write_text("a file where a folder must go")
        path = target / "inner" / "r.json"
    else:
        path = target
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--curriculum-report={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --curriculum-report *"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "collected" not in result.stdout.str(), "the path is checked before any test runs"


COURSE_TEXT = Path(
    os.environ.get("STACKCHECK_COURSE_TEXT", ROOT.parent / "shared" / "curriculum" / "week02-ai-execution-stack.ko.txt")
)


@pytest.mark.skipif(
    not COURSE_TEXT.is_file(),
    reason=f"the course text is not at {COURSE_TEXT} (set STACKCHECK_COURSE_TEXT to check the quotes against it)",
)
def test_every_korean_quote_is_the_courses_own_words():
    """Each claim's ko is the course verbatim, sentence by sentence (whitespace and list dashes
    aside): a reader can find it with the browser's search."""

    def squeeze(text):
        return re.sub(r"[\s\-]+", "", text)

    course = squeeze(COURSE_TEXT.read_text(encoding="utf-8"))
    missing = {}
    for cid, entry in catalogue.catalogue().items():
        parts = [p for p in re.split(r"\s*(?:→|\||\.\.\.|…)\s*|(?<=[.?!])\s+", entry["ko"]) if p.strip()]
        missing.update({cid: p for p in parts if squeeze(p) not in course})
    assert not missing, f"not in the course, word for word: {missing}"


def test_the_docs_claim_table_is_the_catalogues():
    """docs/catalogue.md carries every claim with its section, title and test files, as `python -m
    stackcheck.claims.catalogue --write` writes them (run from the checkout)."""
    page = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    inside = page.split("<!-- claims:start -->")[1].split("<!-- claims:end -->")[0].strip().splitlines()
    stale = "docs/catalogue.md's table is stale: run python -m stackcheck.claims.catalogue --write"
    assert inside == catalogue.readme_table(ROOT), stale


def test_the_catalogue_command_writes_the_table_between_the_markers(tmp_path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "catalogue.md"
    page.write_text("# head\n<!-- claims:start -->\n| stale |\n<!-- claims:end -->\ntail\n", encoding="utf-8")
    catalogue.write_table(tmp_path)
    text = page.read_text(encoding="utf-8")
    table = "\n".join(catalogue.readme_table(tmp_path))
    assert text == f"# head\n<!-- claims:start -->\n{table}\n<!-- claims:end -->\ntail\n"


def test_a_copied_tree_says_its_commit_through_the_environment(monkeypatch):
    """A GPU machine's synced copy of the tree carries a stale git history (the H200's reports read an
    older commit, +dirty); the job that copied it names the commit instead."""
    from stackcheck.evidence import repro

    repro.code_revision.cache_clear()
    monkeypatch.setenv("STACKCHECK_CODE_REVISION", "0123abc")
    try:
        assert repro.code_revision().startswith("0123abc ")
    finally:
        repro.code_revision.cache_clear()


def test_evidence_is_plain_json_that_an_xdist_worker_can_send(pytester):
    """A value execnet cannot serialize (torch's TorchVersion is a str subclass) ended a -n 2 run in an
    INTERNALERROR; evidence keeps plain JSON values."""
    pytester.makepyfile(
        "import pytest\n\nclass Version(str):\n    pass\n\n"
        "@pytest.mark.claim('S2.2-hand')\ndef test_it(evidence):\n"
        "    entry = evidence(torch=Version('2.13.0'), shape=(2, 3))\n"
        "    assert type(entry['torch']) is str and entry['shape'] == [2, 3]\n"
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
