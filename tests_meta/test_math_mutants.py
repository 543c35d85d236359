"""Meta-tests: each claim test of tests_math fails against a wrong implementation (--impl mutant)."""
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent / "tests_math"

# mutant module -> (test file it must break, claim whose tests must fail, -k selection or None)
MUTANTS = {
    "bias_wrong_axis": ("test_s2_2_hand.py", "S2.2-hand", "numpy or torch-cpu"),
    "relu_as_abs": ("test_s2_2_hand.py", "S2.2-hand", "numpy or torch-cpu"),
    "swapped_output": ("test_s2_1_shapes.py", "S2.1-shapes", "numpy or torch-cpu"),
    "unchecked_k": ("test_s2_1_shapes.py", "S2.1-shapes", "numpy or torch-cpu"),
    "copied_bias": ("test_s2_3_broadcast.py", "S2.3-broadcast", None),
    "missing_transpose": ("test_s2_1_linear.py", "S2.1-linear", None),
    "upcasting_compile": ("test_x_numerics.py", "X-numerics", "compiled_matches"),
    "detached_bias": ("test_s8_2_grads.py", "S8.2-grads", None),
    "unmasked_gradient": ("test_s9_5_grads.py", "S9.5-grads", None),
    "same_order_sums": ("test_mc13_bitwise.py", "MC13", "summation_order"),
    "layout_blind": ("test_s2_4_specialize.py", "S2.4-specialize", "torch"),
}


@pytest.mark.meta
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_caught(pytester, mutant):
    test_file, claim, selection = MUTANTS[mutant]
    args = [str(TESTS / test_file), "-m", "cpu", "-p", "no:cacheprovider", "--impl", f"tests_meta.mutants.{mutant}"]
    # A subprocess: an in-process run would drop the torch and JAX modules it imported, and
    # importing them again in the next run crashes the interpreter.
    result = pytester.runpytest_subprocess(*args, "-x", *(["-k", selection] if selection else []))
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1, (
        f"mutant {mutant} survived the {claim} tests in {test_file}:\n" + "\n".join(result.outlines[-15:]))
    result.stdout.fnmatch_lines([f"*F{claim}*"])  # the claim table reports it failed
    assert f"[{claim}]" in result.stdout.str(), "the failure must point the learner to the claim's course section"
