"""The numerics policy: one tolerance table, K scaling, and failure messages a learner can act on."""

import math

import numpy as np
import pytest

from stackcheck.evidence.numerics import (
    DTYPES,
    TOLERANCES,
    assert_matches_reference,
    make_inputs,
    mismatch_report,
    reference_forward,
    round_to,
    tolerance,
)
from stackcheck.stacks.available import need

pytestmark = pytest.mark.meta


def test_table_covers_the_course_dtypes_and_scales_with_k():
    assert set(DTYPES) <= set(TOLERANCES)
    assert TOLERANCES["float32"].atol < TOLERANCES["float16"].atol < TOLERANCES["bfloat16"].atol
    assert tolerance("float32", 400).atol == pytest.approx(TOLERANCES["float32"].atol * math.sqrt(400))
    assert tolerance("float32", 400).rtol == TOLERANCES["float32"].rtol


def test_failure_message_names_count_worst_index_tolerance_and_inputs():
    x, w, b = make_inputs(4, 8, 3, seed=3)
    ref = reference_forward(x, w, b)
    bad = ref.copy()
    bad[2, 1] += 0.5
    with pytest.raises(AssertionError) as info:
        assert_matches_reference(bad, ref, dtype="float32", k=8, stack="demo", device="cpu", seed=3)
    message = str(info.value)
    for needle in (
        "Mismatched elements: 1 / 12",
        "at index (2, 1)",
        "float32 row",
        "x sqrt(K=8)",
        "stack=demo",
        "seed=3",
    ):
        assert needle in message, f"{needle!r} missing from:\n{message}"
    assert "Rerun" not in message and "Course" not in message, "the plugin adds those, once, to the report"


def test_nan_is_always_a_mismatch_and_empty_is_fine():
    tol = tolerance("float32", 1)
    assert mismatch_report(np.array([np.nan]), np.array([1.0]), tol) is not None
    assert mismatch_report(np.zeros((0, 3)), np.zeros((0, 3)), tol) is None
    assert "Shape mismatch" in mismatch_report(np.zeros((2, 3)), np.zeros((3, 2)), tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_round_to_agrees_with_torch(dtype):
    torch = need("torch")
    values = np.random.default_rng(0).uniform(-3, 3, size=1000).astype(np.float32)
    expected = torch.from_numpy(values).to(getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(round_to(values, dtype), expected)


FAILING_CLAIM = """
import numpy as np
import pytest
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs

@pytest.mark.claim("S2.3-broadcast")
def test_broken(impl):
    x, w, b = make_inputs(2, 3, 4, seed=7)
    assert_matches_reference(np.ones(3), np.zeros(3), dtype="float32", k=1, seed=7)
"""


def test_a_failing_claim_test_points_to_the_course_once_with_a_rerun_line(pytester):
    pytester.makepyfile(test_claimed=FAILING_CLAIM)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*stackcheck: what to revisit*",
            "Course §2.1, 2.3 [[]S2.3-broadcast]: b is *",
            "Random inputs (seeded): make_inputs(N=2, K=3, M=4, dtype='float32', seed=7)",
            "Rerun: python -m pytest -p no:cacheprovider 'test_claimed.py::test_broken'",
        ]
    )
    assert result.stdout.str().count("Rerun: python -m pytest") == 1


def test_the_rerun_line_works_for_pyargs_runs_from_another_folder(pytester):
    """--pyargs from another repository: node ids can lose the file; the rerun line must not."""
    package = pytester.path / "site" / "tests_elsewhere"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "test_claimed.py").write_text(FAILING_CLAIM)
    (pytester.path / "repo").mkdir()
    pytester.syspathinsert(pytester.path / "site")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(pytester.path / "repo")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--rootdir", ".", "--pyargs", "tests_elsewhere")
    result.assert_outcomes(failed=1)
    rerun = next(line for line in result.outlines if line.startswith("Rerun:"))
    assert f"'{package / 'test_claimed.py'}::test_broken'" in rerun, rerun


def test_difference_histogram_counts_each_element_once_by_decade():
    from stackcheck.evidence.numerics import difference_histogram

    expected = np.array([1.0, 2.0, 4.0, 8.0, 16.0], dtype=np.float32)
    actual = expected * np.float32([1, 1 + 2e-7, 1 + 3e-4, 1.5, 1])
    found = difference_histogram(actual, expected)
    counts = dict(zip(found["bins"], found["counts"]))
    assert sum(found["counts"]) == expected.size
    assert counts["equal"] == 2 and counts["1e-7..1e-6"] == 1 and counts["1e-4..1e-3"] == 1
    assert counts["1e-1..1e0"] == 1
