"""The typed results model (stackcheck.claims.results): every report the suite ships reads into the
records and writes back to the same JSON, and a file that is not a report is refused with where and
what is wrong (issue 37, item 1)."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.claims.results import (
    SCORE_FORMAT,
    CheckpointScore,
    ClaimScore,
    NotAReport,
    Outcome,
    Report,
    Score,
    Status,
    TestResult,
    Ungradable,
)

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(
    [*ROOT.glob("baselines/*.json"), ROOT / "fixtures" / "homework-report.json", *ROOT.glob("fixtures/h200-*.json")]
)


def written(data: dict) -> dict:
    """A report's JSON as the records write it: each test says whether it counts."""
    for c in data["claims"]:
        c.setdefault("kind", "learner")
        for t in c["tests"]:
            t.setdefault("counts", True)
    for t in data.setdefault("other_tests", []):
        t.setdefault("counts", True)
    return data


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_report_round_trips_through_the_records(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    report = Report.load(path)
    assert report.to_json() == written(data)
    assert Report.from_json(json.loads(report.dumps())) == report
    assert sum(report.counts().values()) == len(report.claims) == len(data["claims"])
    assert all(isinstance(c.status, Status) for c in report.claims)
    assert all(isinstance(t.outcome, Outcome) for _, t in report.tests())


def test_records_are_frozen():
    test = TestResult(nodeid="t", outcome="passed", device="cpu")
    with pytest.raises(AttributeError):
        test.outcome = Outcome.FAILED
    assert test.outcome is Outcome.PASSED and test.to_json()["counts"] is True, "counts is written, true or not"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ([1, 2], "not a curriculum report"),
        ({"claims": []}, "not a curriculum report"),
        ({"environment": {}, "claims": {}}, "claims is not a list"),
        ({"environment": {}, "claims": [{"id": "A", "section": "1", "title": "t", "area": "x"}]}, "missing status"),
        (
            {"environment": {}, "claims": [{"id": "A", "section": "1", "title": "t", "area": "x", "status": "ok"}]},
            "'ok' is not one of verified, partly, failed",
        ),
        (
            {
                "environment": {},
                "claims": [
                    {
                        "id": "A",
                        "section": "1",
                        "title": "t",
                        "area": "x",
                        "status": "verified",
                        "tests": [{"nodeid": "n", "outcome": "won", "device": "cpu"}],
                    }
                ],
            },
            "claim 0 A test 0: n: 'won' is not one of passed",
        ),
        (
            {"environment": {}, "claims": [], "homework": {"percent": 100.0}},
            "homework: a homework score of format None",
        ),
        ({"environment": {}, "claims": [], "homework": {"format": 0}}, "homework: a homework score of format 0"),
        (
            {"environment": {}, "claims": [], "homework": {"format": 1, "claims": [{"id": "A"}]}},
            "homework: claim 0: missing section",
        ),
    ],
)
def test_a_file_that_is_not_a_report_is_refused_with_where_and_what(tmp_path, data, said):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(NotAReport, match=f"^{path}: .*{said}"):
        Report.load(path)


text = st.text(max_size=20)
names = st.lists(text, max_size=3).map(tuple)
number = st.floats(0, 100, allow_nan=False)
claim_scores = st.builds(ClaimScore, text, text, text, text, number, number, st.integers(0, 9), st.integers(1, 9),
                         names, st.sampled_from(["passed", "failed", "not attempted"]), names,
                         st.none() | text, st.none() | text, st.none() | text, st.none() | text)  # fmt: skip
checkpoint_scores = st.builds(
    CheckpointScore, text, number, number, st.booleans(), st.booleans(), names,
    st.dictionaries(text, st.tuples(st.none() | st.booleans(), text).map(list), max_size=3), text, text,
)  # fmt: skip
scores = st.builds(
    Score,
    percent=number,
    claims=st.lists(claim_scores, max_size=3).map(tuple),
    checkpoints=st.lists(checkpoint_scores, max_size=3).map(tuple),
    ungradable=st.lists(st.builds(Ungradable, text, text, text, text), max_size=2).map(tuple),
    skipped_here=st.dictionaries(text, st.integers(0, 99), max_size=2),
    no_score=st.none() | text,
    problems=names,
    borrowed=st.dictionaries(text, text, max_size=2),
    graded=st.booleans(),
    rerun=st.none() | text,
)


@given(score=scores)
@settings(max_examples=50, deadline=None)
def test_any_score_round_trips_through_json_with_its_format(score):
    """The homework score is a record with a format version: whatever it holds, written as JSON and
    read back, it is the same score; a report holding it too."""
    data = json.loads(json.dumps(score.to_json()))
    assert data["format"] == SCORE_FORMAT and Score.from_json(data) == score
    report = Report(environment={}, claims=(), homework=score)
    assert Report.from_json(json.loads(report.dumps())) == report
