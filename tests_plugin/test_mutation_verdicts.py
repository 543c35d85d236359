"""The mutant runner's verdict (stackcheck.claims.mutation.assert_caught): caught, survived, or, when
the claim's tests could not judge it here (a missing stack, ncu refused, timing that could not decide
on a noisy machine, a time limit), a skip with that reason: never a flake, never a survivor."""

import pytest

from stackcheck.claims.catalogue import build_report
from stackcheck.claims.mutation import Mutant, assert_caught
from stackcheck.claims.results import TestResult
from stackcheck.report.render import terminal_table

pytestmark = pytest.mark.meta

MUTANT = Mutant(
    name="host_pull",
    test="tests_runtime/test_s6_3_shape.py",
    claim="S6.3-shape",
    breaks="test_jax_shape_is_free_values_wait",
    hint="MC01",
)


def failed_row(claim: str) -> str:
    """The claims table's row of ``claim`` failed, as a run prints it (stackcheck.report.render)."""
    failed = TestResult(nodeid=f"tests_x.py::test_{claim}", outcome="failed", device="cpu")
    return next(line for line in terminal_table(build_report([([claim], failed)], {})) if f" {claim} " in line)


ROW = failed_row(MUTANT.claim)


def result(*lines: str, ret: int = 0) -> pytest.RunResult:
    return pytest.RunResult(ret, list(lines), [], 1.0)


def test_a_mutant_whose_tests_only_skipped_as_inconclusive_is_inconclusive():
    with pytest.raises(pytest.skip.Exception, match="S6.3-shape tests could not judge it here: inconclusive: A/A"):
        assert_caught(
            result(
                "SKIPPED [1] timing.py:162: inconclusive: A/A noise floor 2.26 >= margin 2.00", "3 skipped in 17.21s"
            ),
            MUTANT,
        )


def test_a_mutant_whose_tests_could_not_run_here_is_skipped_with_the_reason():
    """On the H200 image Triton's interpreter cannot run (NumPy 2.5): the mutant is neither caught nor
    survived."""
    missing = "SKIPPED [1] ../work/main/stackcheck/plugin/hooks.py:308: Triton 3.6.0's CPU interpreter cannot run"
    with pytest.raises(pytest.skip.Exception, match="S6.3-shape tests could not judge it here: Triton 3.6.0's CPU"):
        assert_caught(result(missing, "1 skipped in 0.20s"), MUTANT)


@pytest.mark.parametrize(
    "skipped",
    [
        # issue 53: a Colab T4 refuses the counters; raised in counters.py, it read as a surviving mutant
        "SKIPPED [1] stackcheck/toolchains/counters.py:141: ncu cannot read counters here: ERR_NVGPUCTRPERM",
        "SKIPPED [2] tests_x.py:3: not applicable on this GPU",
    ],
)
def test_a_skip_raised_anywhere_is_a_skip_with_its_reason_not_a_survivor(skipped):
    reason = skipped.split(": ", 1)[1]
    with pytest.raises(pytest.skip.Exception, match=f"could not judge it here: {reason}"):
        assert_caught(result(skipped, "2 passed, 1 skipped in 0.20s"), MUTANT)


@pytest.mark.parametrize(
    "killed",
    [
        "stackcheck.claims.mutation: the run passed its time limit of 300 s; killed",  # Runner (forked)
        "the run passed its time limit of 600 s",  # run_on_gpu (its own process)
    ],
)
def test_a_mutant_killed_at_its_time_limit_is_a_skip_not_a_survivor(killed):
    """Issue 55: on a loaded machine upcasting_max_steps and mojo_min_on_gpu reached the 300 s limit
    and read as survivors; the run failed nothing because it never finished."""
    with pytest.raises(pytest.skip.Exception, match="could not judge it here: the run passed its time limit of"):
        assert_caught(result("..", killed, ret=-9), MUTANT)


def test_a_clone_whose_path_holds_a_space_reads_the_failed_tests():
    """A clone under "with space/": the mutant run names its tests by that path. Read with \\S+ the
    FAILED lines matched nothing, and 50 caught mutants read as 'it broke []' (a clean CI run there)."""
    line = "FAILED ../ws/with space/stackcheck/tests_runtime/test_s6_3_shape.py::test_jax_shape_is_free_values_wait[x]"
    lines = [line, "Revisit first, course §1.2 [MC01]: NumPy code runs on the host", "F [S6.3-shape]", ROW]
    assert_caught(result(*lines, "1 failed in 1.00s", ret=1), MUTANT)
    missing = "SKIPPED [1] ../ws/with space/stackcheck/plugin/hooks.py:308: no cuda device visible"
    with pytest.raises(pytest.skip.Exception, match="could not judge it here: no cuda device visible"):
        assert_caught(result(missing, "1 skipped in 0.20s"), MUTANT)


def test_a_mutant_whose_tests_passed_survived():
    with pytest.raises(AssertionError, match="mutant host_pull survived"):
        assert_caught(result("3 passed in 1.00s"), MUTANT)


def test_a_caught_mutant_must_show_in_the_claims_table_and_point_to_the_section():
    caught = (
        "Revisit first, course §1.2 [MC01]: NumPy code runs on the host",
        ROW,
        "Course §6.3 [S6.3-shape]: ...",
        "FAILED tests_runtime/test_s6_3_shape.py::test_jax_shape_is_free_values_wait[jax-cpu] - AssertionError",
        "1 failed, 2 passed in 1.00s",
    )
    assert_caught(result(*caught, ret=1), MUTANT)
    with pytest.raises(AssertionError, match="claim table must report"):
        assert_caught(result("1 failed in 1.00s", ret=1), MUTANT)


def test_a_mutant_caught_only_by_another_test_of_the_file_is_not_caught():
    other = "FAILED tests_runtime/test_s6_3_shape.py::test_torch_shape_is_free[torch-cpu] - AssertionError"
    lines = ("Revisit first, course §1.2 [MC01]: x", ROW, "Course §6.3 [S6.3-shape]: ...", other)
    with pytest.raises(AssertionError, match="must break test_jax_shape_is_free_values_wait"):
        assert_caught(result(*lines, "1 failed in 1.00s", ret=1), MUTANT)


def test_a_mutant_whose_failure_points_elsewhere_first_is_named():
    lines = (
        "Revisit first, course §6.3 [S6.3-shape]: x",
        ROW,
        "Course §6.3 [S6.3-shape]: ...",
        "FAILED tests_runtime/test_s6_3_shape.py::test_jax_shape_is_free_values_wait[jax-cpu] - AssertionError",
    )
    with pytest.raises(AssertionError, match="must point first to MC01"):
        assert_caught(result(*lines, "1 failed in 1.00s", ret=1), MUTANT)
