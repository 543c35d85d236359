"""Issue 80: every generated way of timing work without waiting for it (stackcheck/claims/not_waiting.py)
fails its claim's test in a CPU-only run, and on a GPU, naming the claim's section; the timing
functions written right pass those tests. A CPU run is one forked pytest of the mutant server
(tests_meta/conftest.py); a GPU run a fresh interpreter of its own."""

from pathlib import Path

import pytest

from stackcheck.claims import not_waiting
from stackcheck.claims.mutation import Mutant, assert_caught, run_args_on_gpu

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = not_waiting.variants()
WRONG = sorted(n for n in VARIANTS if n != "right")


def args(tmp_path: Path, name: str, tests: list[str], device: str) -> list[str]:
    impl = tmp_path / f"{name}.py"
    impl.write_text(VARIANTS[name])
    found = [*(str(ROOT / t) for t in tests), "-m", device, "-p", "no:cacheprovider", "-q", "-rfEs"]
    return found + ["-W", "ignore::pytest.PytestAssertRewriteWarning", "--impl", str(impl)]


def run(mutant_runner, tmp_path: Path, name: str, tests: list[str]):
    return mutant_runner.run_batch([(args(tmp_path, name, tests, "cpu"), tmp_path)])[0]


@pytest.mark.meta
@pytest.mark.parametrize("name", WRONG)
def test_each_way_of_not_waiting_fails_its_claim_on_the_cpu(mutant_runner, tmp_path, name):
    claim, test, hint = not_waiting.CAUGHT_BY[name]
    file, _, function = test.partition("::")
    result = run(mutant_runner, tmp_path, name, [test])
    assert_caught(result, Mutant(name=name, test=file, claim=claim, breaks=function, hint=hint))


@pytest.mark.meta
@pytest.mark.cuda
@pytest.mark.parametrize("name", WRONG)
def test_each_way_of_not_waiting_fails_its_claim_on_the_gpu(tmp_path, name):
    """The same tests on a GPU, JAX's device there: in a pytest process of its own (a CUDA context
    does not survive the mutant server's fork)."""
    claim, test, hint = not_waiting.CAUGHT_BY[name]
    file, _, function = test.partition("::")
    result = run_args_on_gpu(args(tmp_path, name, [test], "cuda"), tmp_path)
    assert_caught(result, Mutant(name=name, test=file, claim=claim, breaks=function, hint=hint, device="cuda"))


@pytest.mark.meta
def test_the_timing_functions_written_right_pass_every_test_of_the_class(mutant_runner, tmp_path):
    tests = sorted({test for _, test, _ in not_waiting.CAUGHT_BY.values()})
    result = run(mutant_runner, tmp_path, "right", tests)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and not outcomes.get("failed") and not outcomes.get("errors"), "\n".join(
        result.outlines[-30:]
    )


@pytest.mark.meta
def test_every_wrong_form_of_every_part_has_a_test_that_catches_it():
    """A wrong form added to the generator without a test to catch it fails here, not silently."""
    assert set(not_waiting.CAUGHT_BY) == set(WRONG)
    assert all(len(forms) >= 2 for forms in not_waiting.PARTS.values())
