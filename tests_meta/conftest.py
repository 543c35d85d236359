from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def run_with_mutant(pytester):
    """Run a claim test file against ``tests_meta.mutants.NAME`` in a subprocess; return the result.

    A subprocess, because an in-process pytester run drops the torch and JAX modules it imported,
    and importing them again in the next run crashes the interpreter."""
    def run(test_file: str, mutant: str, selection: str | None = None):
        args = [str(ROOT / test_file), "-m", "cpu", "-p", "no:cacheprovider", "-x",
                "--impl", f"tests_meta.mutants.{mutant}", *(["-k", selection] if selection else [])]
        return pytester.runpytest_subprocess(*args)
    return run


def assert_caught(result, mutant: str, claim: str) -> None:
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) >= 1, (
        f"mutant {mutant} survived the {claim} tests:\n" + "\n".join(result.outlines[-15:]))
    result.stdout.fnmatch_lines([f"*F{claim}*"])  # the claim table reports it failed
    assert f"[{claim}]" in result.stdout.str(), "the failure must point the learner to the claim's course section"


def mutant_cases(cases):
    """Parametrize a meta-test over (mutant, test file, claim, -k selection or None) rows."""
    return pytest.mark.parametrize("mutant, test_file, claim, selection", cases,
                                   ids=[f"{m}-{c}" for m, _, c, _ in cases])
