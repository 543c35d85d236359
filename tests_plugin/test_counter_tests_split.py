"""Issue 53: a GPU that refuses Nsight Compute's counters (Colab, a laptop: ERR_NVGPUCTRPERM) skips
the tests that read counters, and only those. A test that reads counters (``counters.profile``)
checks no numbers of its own, and each claim with one keeps a test that reads no counters and checks
numbers, so on such a GPU the claim's numeric half still runs. Read from the claim tests' syntax
(helpers of the module followed), so the next counter test written with a numeric check is caught."""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta
ROOT = Path(__file__).resolve().parent.parent
CLAIM_FOLDERS = ("tests_math", "tests_ir", "tests_runtime", "tests_kernels", "tests_hardware", "tests_course")
NUMERIC = {"assert_matches_reference", "assert_exact", "assert_outputs_match", "assert_tilings_right"}


def called(node) -> set[str]:
    return {
        n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
    }


def reads_counters(function: ast.FunctionDef) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "profile"
        and isinstance(n.func.value, ast.Name) and n.func.value.id == "counters"
        for n in ast.walk(function)
    )  # fmt: skip


def claim_of(function: ast.FunctionDef) -> str | None:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "claim":
            return ast.literal_eval(decorator.args[0])
    return None


def checks_numbers(function: ast.FunctionDef, helpers: dict) -> set[str]:
    """The numeric checks ``function`` makes, itself or through a function of its module."""
    names = called(function)
    for helper in names & helpers.keys():
        names |= called(helpers[helper])
    return names & NUMERIC


FILES = sorted(
    p for folder in CLAIM_FOLDERS for p in (ROOT / folder).glob("test_*.py") if "counters.profile(" in p.read_text()
)


def test_the_counter_tests_are_found():
    assert len(FILES) >= 9, FILES


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_counter_test_reads_counters_only_and_its_claim_keeps_a_numeric_test(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    helpers = {n: f for n, f in functions.items() if not n.startswith("test_")}
    tests = [f for n, f in functions.items() if n.startswith("test_")]
    for test in (t for t in tests if reads_counters(t)):
        assert not checks_numbers(test, helpers), (
            f"{path.name}::{test.name} reads counters and checks numbers ({checks_numbers(test, helpers)}): a GPU "
            "that refuses ncu skips both; move the numbers to a test of the same claim that reads no counters"
        )
        claim = claim_of(test)
        same = [t for t in tests if claim_of(t) == claim and not reads_counters(t)]
        numeric = [t.name for t in same if checks_numbers(t, helpers)]
        assert numeric, f"{path.name}: claim {claim} reads counters but no test of it checks numbers without them"
