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
