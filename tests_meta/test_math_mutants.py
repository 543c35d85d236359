"""Meta-tests: each claim test of tests_math fails against a wrong implementation (--impl mutant)."""
import pytest

from tests_meta.conftest import assert_caught, mutant_cases

# (mutant module, test file it must break, claim whose tests must fail, -k selection or None)
MUTANTS = [
    ("bias_wrong_axis", "tests_math/test_s2_2_hand.py", "S2.2-hand", "numpy or torch-cpu"),
    ("relu_as_abs", "tests_math/test_s2_2_hand.py", "S2.2-hand", "numpy or torch-cpu"),
    ("swapped_output", "tests_math/test_s2_1_shapes.py", "S2.1-shapes", "numpy or torch-cpu"),
    ("unchecked_k", "tests_math/test_s2_1_shapes.py", "S2.1-shapes", "numpy or torch-cpu"),
    ("copied_bias", "tests_math/test_s2_3_broadcast.py", "S2.3-broadcast", None),
    ("missing_transpose", "tests_math/test_s2_1_linear.py", "S2.1-linear", None),
    ("upcasting_compile", "tests_math/test_x_numerics.py", "X-numerics", "compiled_matches"),
    ("detached_bias", "tests_math/test_s8_2_grads.py", "S8.2-grads", None),
    ("unmasked_gradient", "tests_math/test_s9_5_grads.py", "S9.5-grads", None),
    ("same_order_sums", "tests_math/test_mc13_bitwise.py", "MC13", "summation_order"),
    ("layout_blind", "tests_math/test_s2_4_specialize.py", "S2.4-specialize", "torch"),
]


@pytest.mark.meta
@mutant_cases(MUTANTS)
def test_mutant_is_caught(run_with_mutant, mutant, test_file, claim, selection):
    assert_caught(run_with_mutant(test_file, mutant, selection), mutant, claim)
