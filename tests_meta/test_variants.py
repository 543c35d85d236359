"""Meta-tests, the mirror of the mutants: correct implementations written differently from
stackcheck/impl/reference.py (tests_meta/variants/, one module each) pass every claim test that
reaches the functions they write (issue 34: correct work in any style passes).

What a variant reaches is read from the tests, not listed by hand: a test file that asks for
``impl.NAME``, or runs a stack's forward through stackcheck.run.runners, or builds a MAX graph
(whose builders are ``max_steps``, ``mojo_relu`` and ``mojo_package``), each narrowed to the stacks of
the functions the variant writes. A run must call each of them (the plugin's "--impl ...: called"
line), so a variant no test reaches is a failure, not a pass."""

import ast
from pathlib import Path

import pytest

from stackcheck.claims.mutation import TIME_LIMIT
from stackcheck.homework import reach
from stackcheck.impl.loader import SURFACE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VARIANTS = sorted(p.stem for p in (HERE / "variants").glob("*.py") if p.stem != "__init__")


def written(name: str) -> list[str]:
    """The surface functions variant ``name`` defines itself (not the ones it imports)."""
    tree = ast.parse((HERE / "variants" / f"{name}.py").read_text())
    return sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in SURFACE)


def reaching(functions: list[str]) -> list[str]:
    return reach.test_files(functions, ROOT)


def selection(functions: list[str]) -> str:
    return reach.mark_expression(functions)


def variant_args(name: str) -> list[str]:
    functions = written(name)
    return [
        *reaching(functions),
        "-m",
        selection(functions),
        "-p",
        "no:cacheprovider",
        "-q",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--impl",
        f"tests_meta.variants.{name}",
    ]


def compiles_max(name: str) -> bool:
    """Whether variant ``name`` builds MAX graphs of its own: each compiles cold for minutes."""
    return bool(reach.GRAPH_BUILDERS & set(written(name)))


@pytest.mark.meta
@pytest.mark.parametrize(
    "name", [pytest.param(v, marks=[pytest.mark.max_compiles] * compiles_max(v)) for v in VARIANTS]
)
def test_variant_passes_every_claim_test_it_reaches(mutant_runner, tmp_path, name):
    __tracebackhide__ = True
    # a MAX variant's graphs compile cold (measured: over 300 s on 2 cores beside the cross-compiles)
    result = mutant_runner.run(variant_args(name), tmp_path, timeout=1200 if compiles_max(name) else None)
    tail = "\n".join(result.outlines[-30:])
    outcomes = result.parseoutcomes() if any(" in " in line for line in result.outlines[-3:]) else {}
    if not outcomes.get("passed") and outcomes.get("skipped"):
        reasons = [line for line in result.outlines if line.startswith("SKIPPED")]
        pytest.skip(f"variant {name}: every test it reaches skipped here: {reasons[0][:300] if reasons else tail}")
    failed = [line for line in result.outlines if line.startswith(("FAILED", "ERROR"))]
    killed = next((m[0] for line in result.outlines if (m := TIME_LIMIT.search(line))), None)
    if killed and not failed:  # no verdict: slow here (a loaded machine), not wrong
        pytest.skip(f"inconclusive: variant {name} {killed}, no test of it failed before: {tail[-300:]}")
    why = [line for line in result.outlines if line.startswith("E ")][:25]  # the failures' own messages
    assert result.ret == 0 and outcomes.get("passed") and not failed, (
        f"variant {name} ({', '.join(written(name))}) is correct, and failed (exit code {result.ret}):\n"
        + "\n".join(failed[:20] + why)
        + f"\n{tail}"
    )
    calls = next((line for line in result.outlines if "never called by these tests:" in line), "")
    idle = set(calls.rpartition("never called by these tests: ")[2].split(", ")) & set(written(name))
    assert calls and not idle, f"variant {name}: no test called {sorted(idle) or 'its functions'}:\n{tail}"


@pytest.mark.meta
def test_every_surface_function_has_two_variants():
    """Each function of the implementation surface is written at least two ways besides the
    reference's, in at least 25 variants."""
    ways = {f: [v for v in VARIANTS if f in written(v)] for f in SURFACE}
    thin = {f: v for f, v in ways.items() if len(v) < 2}
    assert len(VARIANTS) >= 25 and not thin, f"{len(VARIANTS)} variants; written fewer than two ways: {thin}"


@pytest.mark.meta
@pytest.mark.parametrize("name", VARIANTS)
def test_each_variant_says_how_it_differs(name):
    """Read, not imported: a variant of a stack this machine lacks is still checked."""
    docstring = ast.get_docstring(ast.parse((HERE / "variants" / f"{name}.py").read_text()))
    assert (docstring or "").strip() and written(name), f"variant {name}: a docstring, and a surface function"
