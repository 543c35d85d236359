"""The suite's structure, read from its source: dependencies point one way (tests -> helpers ->
nothing of the plugin), tests share helpers only through stackcheck/, every comparison goes through
the tolerance policy, every random input is seeded, the only timer is stackcheck.evidence.timing, no test
takes a parameter it ignores, and every claim with tests has a mutant that proves they can fail."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

from stackcheck.claims import catalogue

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stackcheck"
# stackcheck's packages, lowest first: a module may import its own package and those before it, never
# one after it. Top-level modules are commands: the package __init__ (the pytest11 entry point), cli and
# mojo_build come after every package they use, and so does the grader, a module of grading named apart.
LAYERS = [
    "stackcheck.paths",
    "stackcheck.evidence",
    "stackcheck.claims",
    "stackcheck.stacks",
    "stackcheck.toolchains",
    "stackcheck.judges",
    "stackcheck.impl",
    "stackcheck.grading",
    "stackcheck.run",
    "stackcheck.homework",
    "stackcheck.course",
    "stackcheck.report",
    "stackcheck.plugin",
    "stackcheck.grading.grader",
    "stackcheck.cli",
    "stackcheck.mojo_build",
    "stackcheck",
]
PLUGIN = "stackcheck.plugin"
TEST_FILES = sorted(p for p in ROOT.glob("tests_*/**/*.py"))
CLAIM_TESTS = sorted(p for p in ROOT.glob("tests_*/test_*.py") if p.parent.name not in ("tests_plugin", "tests_meta"))


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (``from a import b`` yields a and a.b)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def calls(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every call in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            found.append((node.lineno, name))
    return found


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The index in LAYERS of the package (or module) ``module`` belongs to: its longest entry, so a
    module named there (the grader) sits apart from the rest of its package."""
    found = [(len(name), i) for i, name in enumerate(LAYERS) if module == name or module.startswith(name + ".")]
    assert found, f"{module} belongs to no layer of LAYERS: add its package there"
    return max(found)[1]


def module_graph() -> dict[str, set[str]]:
    """stackcheck's modules and the stackcheck modules each imports, function-level imports included."""
    # "from stackcheck import report" names the package too; only its submodule is the dependency
    return {
        name: {m for m in imports(path) if m in MODULES and m not in (name, "stackcheck")}
        for name, path in MODULES.items()
    }


def test_every_package_says_what_it_owns():
    packages = [p.parent for p in PACKAGE.glob("*/__init__.py")]
    assert packages, "no packages found"
    for folder in packages:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        assert doc and len(doc) > 40, f"{relative(folder)}/__init__.py: a docstring says what the package owns"
        assert f"stackcheck.{folder.name}" in LAYERS, f"{relative(folder)} is missing from LAYERS"


def test_dependencies_point_down_the_layers():
    """A module imports its own package and lower ones, never a higher one (function-level imports
    counted): helpers never reach the plugin, and the plugin is the only package that hooks pytest."""
    upward = [
        f"{name} -> {other}"
        for name, others in module_graph().items()
        for other in sorted(others)
        if layer(other) > layer(name) and not other.startswith(name + ".")
    ]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_a_wrong_way_import_is_found():
    assert layer("stackcheck.evidence.numerics") < layer("stackcheck.plugin.hooks") < layer("stackcheck")
    assert layer("stackcheck.report") < layer("stackcheck.plugin.recorder")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_dependencies_point_one_way():
    """No import circle among stackcheck's modules, counting imports inside functions."""
    graph = module_graph()
    found = cycles(graph)
    assert not found, "import circles: " + "; ".join(
        " <-> ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found
    )


def test_a_circle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_tests_import_neither_test_modules_nor_conftests_nor_the_plugin():
    bad = {}
    for path in TEST_FILES:
        wrong = sorted(
            m for m in imports(path) if m.startswith(("tests_", PLUGIN + ".")) or "conftest" in m or m == PLUGIN
        )
        if wrong:
            bad[relative(path)] = wrong
    assert not bad, f"shared helpers belong in stackcheck/: {bad}"


def test_pytester_is_loaded_only_by_the_self_test_folders():
    for path in [*PACKAGE.glob("*.py"), ROOT / "conftest.py"]:
        assert not re.search(r"pytest_plugins.*pytester", path.read_text()), (
            f"{relative(path)} loads pytester into every user's session"
        )
    for folder in ("tests_plugin",):
        assert 'import_plugin("pytester")' in (ROOT / folder / "conftest.py").read_text()


RAW_COMPARISONS = re.compile(
    r"(?:^|\.)(?:allclose|isclose|assert_close|assert_allclose|assert_array_almost_equal|"
    r"assert_array_equal|approx)$"
)


def test_every_comparison_goes_through_the_tolerance_policy():
    bad = [
        f"{relative(p)}:{line}: {name}" for p in CLAIM_TESTS for line, name in calls(p) if RAW_COMPARISONS.search(name)
    ]
    policy = "compare with stackcheck.evidence.numerics (assert_matches_reference, assert_exact)"
    assert not bad, policy + ":\n" + "\n".join(bad)


UNSEEDED = re.compile(
    r"^(?:torch\.(?:rand|randn|randint|rand_like|randn_like|manual_seed)|"
    r"np\.random\.\w+|numpy\.random\.\w+|random\.\w+|jax\.random\.PRNGKey)$"
)


def test_every_random_input_is_seeded_through_numerics():
    bad = [f"{relative(p)}:{line}: {name}" for p in CLAIM_TESTS for line, name in calls(p) if UNSEEDED.search(name)]
    assert not bad, (
        "draw inputs with stackcheck.evidence.numerics.make_inputs or uniform (seeded, and the seed goes "
        "into the failure message):\n" + "\n".join(bad)
    )


def test_the_only_timer_is_stackcheck_timing():
    bad = [
        f"{relative(p)}:{line}: {name}"
        for p in CLAIM_TESTS
        for line, name in calls(p)
        if re.fullmatch(r"time\.(?:perf_counter|time|monotonic|process_time)(?:_ns)?", name)
    ]
    assert not bad, "time with stackcheck.evidence.timing (host_timer, stopwatch, interleaved):\n" + "\n".join(bad)


def test_no_test_takes_a_parameter_it_ignores():
    """A test that only needs a device is parametrized with device_params, not (stack, device)."""
    bad = []
    for path in CLAIM_TESTS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                params = {a.arg for a in node.args.args} & {"stack", "dtype", "device"}
                used = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
                bad += [f"{relative(path)}::{node.name} ignores {p}" for p in sorted(params - used)]
    assert not bad, "\n".join(bad)


def claim_ids_in(paths, marker: str) -> dict[str, list[str]]:
    """claim id -> files whose tests carry @pytest.mark.<marker>(id, ...)."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == f"pytest.mark.{marker}":
                for arg in node.args:
                    found.setdefault(ast.literal_eval(arg), []).append(relative(path))
    return found


def test_every_claim_with_tests_has_a_mutant_that_its_tests_catch():
    tested = claim_ids_in(CLAIM_TESTS, "claim")
    with open(ROOT / "tests_meta" / "mutants.toml", "rb") as f:
        rows = tomllib.load(f)["mutant"]
    killed = {row["claim"] for row in rows} | set(claim_ids_in(sorted(ROOT.glob("tests_meta/test_*.py")), "mutant_for"))
    assert set(tested) <= set(catalogue.catalogue()), "claim ids must be in the catalogue"
    missing = sorted(set(tested) - killed)
    assert not missing, (
        f"claims with tests but no mutant: {missing}. Add a wrong implementation to "
        "tests_meta/mutants/ and a row to tests_meta/mutants.toml"
    )
    for row in rows:
        assert (ROOT / "tests_meta" / "mutants" / f"{row['name']}.py").exists(), row
        assert (ROOT / row["test"]).exists(), row
        assert row["claim"] in tested and row["test"] in tested[row["claim"]], (
            f"{row['test']} holds no test of {row['claim']}: {row}"
        )


def checks_tests(paths) -> dict[str, dict[str, bool]]:
    """claim id -> each of its test functions (``file::name``) -> whether it shows the statement (no
    ``@pytest.mark.checks``: an instrument or precondition check)."""
    found: dict[str, dict[str, bool]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            marks = {ast.unparse(d.func) if isinstance(d, ast.Call) else ast.unparse(d): d for d in node.decorator_list}
            claim = marks.get("pytest.mark.claim")
            for cid in (ast.literal_eval(a) for a in claim.args) if isinstance(claim, ast.Call) else ():
                found.setdefault(cid, {})[f"{relative(path)}::{node.name}"] = "pytest.mark.checks" not in marks
    return found


def test_a_claim_is_verified_only_by_a_test_that_shows_it_and_a_mutant_fails_that_test():
    """Issue 75: a claim test that checks an instrument or a precondition (``@pytest.mark.checks``) never
    verifies its claim alone, so every claim with tests has one that shows its statement, and a mutant
    row's ``breaks`` names a test that shows it: a wrong implementation caught only by an instrument check
    passes everything that shows the statement."""
    tests = checks_tests(CLAIM_TESTS)
    assert sum(not shows for by in tests.values() for shows in by.values()) >= 8, "the checks marks were found"
    lone = sorted(cid for cid, by in tests.items() if not any(by.values()))
    assert not lone, f"claims whose every test checks an instrument or precondition: {lone}"
    with open(ROOT / "tests_meta" / "mutants.toml", "rb") as f:
        rows = tomllib.load(f)["mutant"]
    wrong = [
        f"{row['name']}: {row['test']}::{row['breaks']}"
        for row in rows
        if not tests.get(row["claim"], {}).get(f"{row['test']}::{row['breaks']}", True)
    ]
    assert not wrong, f"mutants caught only by a test that checks an instrument or precondition: {wrong}"


def test_one_registry_of_stacks():
    """Stacks are records of stackcheck.stacks.records; nothing else keeps a table of them."""
    from stackcheck.stacks.records import STACKS

    for path in PACKAGE.rglob("*.py"):
        if path.name != "records.py":
            assert not re.search(r"^STACKS\s*=", path.read_text(), re.M), f"{relative(path)} defines STACKS"
    from stackcheck.run.runners import RUNNERS

    for record in STACKS.values():
        steps, forward = RUNNERS[record.name]
        assert forward and steps and record.devices and record.dist, record.name


def test_the_readme_layout_is_the_layer_order():
    """README's layout table: one line per package, in LAYERS' order (commands and the entry point aside)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(stackcheck/[\w.]+)/?` \|", readme.split("## Layout")[1], re.M)
    shown = [f"stackcheck.{name.split('/', 1)[1].removesuffix('.py')}" for name in listed]
    expected = [name for name in LAYERS if name in shown or (PACKAGE / name.split(".", 1)[-1]).is_dir()]
    assert shown == expected, f"README's layout table {shown} is not LAYERS' packages in order {expected}"


def test_every_source_folder_is_a_shipped_package():
    """A folder of modules without __init__.py, or missing from pyproject's packages, works in the editable
    checkout and is absent from an installed wheel (stackcheck/report was, until this test)."""
    shipped = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")} - {PACKAGE}):
        name = "stackcheck." + ".".join(folder.relative_to(PACKAGE).parts)
        assert (folder / "__init__.py").exists(), f"{relative(folder)} has modules but no __init__.py"
        assert name in shipped, f"{name} is missing from pyproject.toml's [tool.setuptools] packages"


def claims_and_impl_use() -> dict[str, set[bool]]:
    """Each claim id -> whether each of its tests takes the ``impl`` fixture (the code under test)."""
    found: dict[str, set[bool]] = {}
    for path in CLAIM_TESTS:
        tree = ast.parse(path.read_text())
        module = [
            arg.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
            for call in ast.walk(node.value)
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "claim"
            for arg in call.args
            if isinstance(arg, ast.Constant)
        ]
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")):
            marked = [
                arg.value
                for d in fn.decorator_list
                for call in ast.walk(d)
                if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "claim"
                for arg in call.args
                if isinstance(arg, ast.Constant)
            ]
            for cid in module + marked:
                found.setdefault(cid, set()).add("impl" in [a.arg for a in fn.args.args])
    return found


def test_a_claim_no_test_of_which_runs_the_code_under_test_is_a_stack_fact():
    """Issue 24: a claim about the stacks says so (kind = "stack-fact", with its reason), so homework
    scores leave it out; a claim whose tests never take ``impl`` cannot be about the learner's code."""
    known = catalogue.catalogue()
    unlabelled = sorted(c for c, uses in claims_and_impl_use().items() if uses == {False} and c in known)
    unlabelled = [c for c in unlabelled if known[c].get("kind") != "stack-fact"]
    assert not unlabelled, f'no test of these runs impl: mark them kind = "stack-fact": {unlabelled}'
    for cid, entry in known.items():
        assert entry.get("kind", "learner") in ("learner", "stack-fact"), cid
        assert (entry.get("kind") == "stack-fact") == bool(entry.get("kind_reason")), f"{cid}: a stack fact says why"
