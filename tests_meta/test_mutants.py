"""Meta-tests: every claim test fails against the wrong implementations of the mutant table
(tests_meta/mutants.toml), and points the learner to the claim's course section."""

from pathlib import Path

import pytest

from stackcheck.claims.mutation import assert_caught, batches, run_on_gpu, table

HERE = Path(__file__).resolve().parent
MUTANTS = table(HERE / "mutants.toml")
# A batch's runs share one forked process (tests_meta/conftest.py), so a batch goes to one xdist worker.
BATCHED = [
    pytest.param(m, batch, id=m.id, marks=pytest.mark.xdist_group(f"mutants-{i}"))
    for i, batch in enumerate(batches([m for m in MUTANTS if m.device == "cpu"]))
    for m in batch
]


@pytest.mark.meta
@pytest.mark.parametrize(("mutant", "batch"), BATCHED)
def test_mutant_is_caught(mutant_run, mutant, batch):
    assert_caught(mutant_run(mutant, batch), mutant)


@pytest.mark.meta
@pytest.mark.cuda
@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.device == "cuda"], ids=lambda m: m.id)
def test_cuda_mutant_is_caught_on_the_gpu(mutant, tmp_path):
    """Issue 35: the cuda-only claims' wrong implementations, found by the audit on the H200, are
    caught by the claim's own cuda tests there (a skip where no GPU is visible)."""
    assert_caught(run_on_gpu(HERE.parent, mutant, tmp_path), mutant)


@pytest.mark.meta
def test_hints_point_nine_in_ten_mistakes_to_their_own_section():
    """Issue 23: the first "Revisit first" pointer of each mutant's failure is its own mistake (each row's
    run checks it); rows whose failure text cannot tell their mistake apart say why, and stay under 10 %."""
    missed = [m.id for m in MUTANTS if m.hint_miss]
    assert len(missed) <= 0.1 * len(MUTANTS), f"{len(missed)} of {len(MUTANTS)} rows miss their hint: {missed}"


@pytest.mark.meta
def test_each_row_names_a_test_of_its_claim_that_it_breaks():
    """Issue 24 item 6: ``breaks`` is a test function of the row's file that carries the row's claim."""
    import ast

    for m in MUTANTS:
        tree = ast.parse((HERE.parent / m.test).read_text())
        found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == m.breaks]
        assert found, f"{m.id}: {m.test} has no test {m.breaks}"
        marks = " ".join(ast.unparse(d) for d in found[0].decorator_list)
        module = " ".join(
            ast.unparse(n) for n in tree.body if isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n)
        )
        assert f"'{m.claim}'" in marks + module or f'"{m.claim}"' in marks + module, (
            f"{m.id}: {m.breaks} is not a {m.claim} test"
        )
