"""Meta-tests: each claim test of tests_math fails against a wrong implementation (--impl mutant)."""
from pathlib import Path

import pytest

HERE = Path(__file__).parent

# mutant module -> (test file it must break, claim whose tests must fail)
MUTANTS = {
    "bias_wrong_axis": ("test_s2_2_hand.py", "S2.2-hand"),
    "relu_as_abs": ("test_s2_2_hand.py", "S2.2-hand"),
    "swapped_output": ("test_s2_1_shapes.py", "S2.1-shapes"),
    "unchecked_k": ("test_s2_1_shapes.py", "S2.1-shapes"),
    "copied_bias": ("test_s2_3_broadcast.py", "S2.3-broadcast"),
    "missing_transpose": ("test_s2_1_linear.py", "S2.1-linear"),
}


@pytest.mark.meta
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_caught(pytester, mutant):
    test_file, claim = MUTANTS[mutant]
    result = pytester.runpytest_inprocess(str(HERE / test_file), "-m", "cpu", "-p", "no:cacheprovider",
                                          "--impl", f"tests_math.mutants.{mutant}")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1, (
        f"mutant {mutant} survived the {claim} tests in {test_file}:\n" + "\n".join(result.outlines[-15:]))
    result.stdout.fnmatch_lines([f"*F{claim}*"])  # the claim table reports it failed
    assert f"[{claim}]" in result.stdout.str(), "the failure must point the learner to the claim's course section"
