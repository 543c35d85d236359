"""Claims: the catalogue holds the course's 45 ids; tests declare them; the report counts them."""
import json

import pytest

from stackcheck import claims

pytestmark = pytest.mark.meta

EAGER = "numpy-cpu or torch-cpu"  # the eager variants: fast, and nothing compiled in-process

IDS = {
    "math": "S2.1-shapes S2.2-hand S2.3-broadcast S2.1-linear S2.4-specialize S8.2-grads S9.5-grads X-numerics MC13",
    "ir": "S4.3-ir S9.3-hlo S5.2-fusion Q1 MC01 MC02 MC03 MC12 S4.4-graph-break S10.2-record",
    "runtime": "MC06 MC07 MC09 Q2 S6.3-shape S6.5-regimes S6.2-resident S6.4-order",
    "kernels": "S11.2-mask S11.2-guard S11.3-program S11.4-scope S10.4-custom S10.5-mojo-gpu MC10",
    "hardware": "MC04 MC05 MC08 Q3 Q5 S7.2-hierarchy S7.3-tpu S5.3-tiling",
    "course": "MC11 Q4 S14.4-repro",
}


def test_catalogue_has_every_course_claim_once_with_its_wording():
    catalogue = claims.catalogue()
    expected = {cid: area for area, ids in IDS.items() for cid in ids.split()}
    assert len(expected) == 45 and set(catalogue) == set(expected)
    for cid, entry in catalogue.items():
        assert entry["area"] == expected[cid], cid
        assert entry["section"] and entry["title"] and entry["ko"], cid
        assert any("\uac00" <= ch <= "\ud7a3" for ch in entry["ko"]), f"{cid}: ko must quote the Korean course"
    misconceptions = [cid for cid in catalogue if cid.startswith("MC")]
    assert sorted(misconceptions) == [f"MC{i:02d}" for i in range(1, 14)]
    assert all("misconception" in catalogue[cid] for cid in misconceptions)
    assert all(catalogue[e["revisit"]].get("misconception") for e in catalogue.values() if "revisit" in e)


def test_unknown_claim_id_fails_and_unclaimed_test_is_listed(pytester):
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.claim('S99-nothing')\ndef test_unknown():\n    pass\n"
        "def test_unclaimed():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines([
        "*unknown claim id(s) ['S99-nothing']*",
        "*tests that prove no claim*", "*test_unclaimed*",
        "*FAIL unknown claim id(s): S99-nothing*",
    ])


def test_curriculum_report_json_and_markdown(pytester, suite_file, tmp_path):
    path = tmp_path / "report.json"
    result = pytester.runpytest_inprocess(suite_file("tests_math/test_s2_2_hand.py"), "-k", EAGER,
                                          "-p", "no:cacheprovider", f"--curriculum-report={path}")
    result.assert_outcomes(passed=2)
    report = json.loads(path.read_text(encoding="utf-8"))
    assert {"date", "os", "cpu", "accelerator", "driver", "python", "versions", "backends",
            "precision"} <= set(report["environment"])
    by_id = {c["id"]: c for c in report["claims"]}
    assert set(by_id) == set(claims.catalogue())
    hand = by_id["S2.2-hand"]
    assert hand["status"] == "verified" and hand["section"] == "2.2"
    assert {t["outcome"] for t in hand["tests"]} == {"passed"} and {t["device"] for t in hand["tests"]} == {"cpu"}
    assert all(c["status"] == "untested" for cid, c in by_id.items() if cid != "S2.2-hand")
    markdown = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "| `S2.2-hand` | 2.2 | verified | 2/0/0 |" in markdown
    result.stdout.fnmatch_lines(["*math: .S2.1-shapes +S2.2-hand*",
                                 "*claims: 1 verified, 0 failed, 0 skipped, 44 untested*"])


def test_status_rules():
    assert claims.status([]) == "untested"
    assert claims.status(["skipped", "skipped"]) == "skipped"
    assert claims.status(["passed", "skipped"]) == "verified"
    assert claims.status(["passed", "failed"]) == "failed"


def test_require_claims_fails_the_run_when_claims_are_untested(pytester, suite_file):
    result = pytester.runpytest_inprocess(suite_file("tests_math/test_s2_2_hand.py"), "-k", EAGER,
                                          "-p", "no:cacheprovider", "--require-claims")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL --require-claims: 44 claim(s) untested or failed*"])
