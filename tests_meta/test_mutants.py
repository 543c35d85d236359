"""Meta-tests: every claim test fails against the wrong implementations of the mutant table
(tests_meta/mutants.toml), and points the learner to the claim's course section."""

from pathlib import Path

import pytest

from stackcheck.claims.mutation import assert_caught, mutant_args, table

HERE = Path(__file__).resolve().parent
MUTANTS = table(HERE / "mutants.toml")


@pytest.mark.meta
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.id for m in MUTANTS])
def test_mutant_is_caught(mutant_runner, tmp_path, mutant):
    assert_caught(mutant_runner.run(mutant_args(HERE.parent, mutant), tmp_path), mutant)


@pytest.mark.meta
def test_hints_point_nine_in_ten_mistakes_to_their_own_section():
    """Issue 23: the first "Revisit first" pointer of each mutant's failure is its own mistake (each row's
    run checks it); rows whose failure text cannot tell their mistake apart say why, and stay under 10 %."""
    missed = [m.id for m in MUTANTS if m.hint_miss]
    assert len(missed) <= 0.1 * len(MUTANTS), f"{len(missed)} of {len(MUTANTS)} rows miss their hint: {missed}"
