"""Meta-tests: the runtime claim tests catch a timer without sync, a sync that does nothing, and a
steady state that includes the first call."""
import pytest

from tests_meta.conftest import assert_caught, mutant_cases

MUTANTS = [
    ("forgetful_timer", "tests_runtime/test_q2_unsynced_timer.py", "Q2", None),
    ("noop_sync", "tests_runtime/test_q2_unsynced_timer.py", "Q2", None),
    ("noop_sync", "tests_runtime/test_mc06_returned_not_finished.py", "MC06", None),
    ("noop_sync", "tests_runtime/test_mc07_sync_waits.py", "MC07", None),
    ("host_pull", "tests_runtime/test_s6_2_resident.py", "S6.2-resident", None),
    ("host_pull", "tests_runtime/test_s6_4_order.py", "S6.4-order", None),
    ("cold_steady_state", "tests_runtime/test_s6_5_regimes.py", "S6.5-regimes", "in_order"),
    ("cold_steady_state", "tests_runtime/test_mc09_compile_cost.py", "MC09", "jax"),
]


@pytest.mark.meta
@mutant_cases(MUTANTS)
def test_mutant_is_caught(run_with_mutant, mutant, test_file, claim, selection):
    assert_caught(run_with_mutant(test_file, mutant, selection), mutant, claim)
