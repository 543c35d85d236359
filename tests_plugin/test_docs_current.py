"""The docs describe the code as it is: every file path, claim id and option a page names in code
exists today. Read from every page of docs/ and the README: a path with a folder must exist in the
checkout (a placeholder such as NAME or DIR aside), a bare test file's name must be a file of the
suite, a claim id must be in the catalogue, and an option of a pytest, .ci or stackcheck command
must be one that pytest (with this run's plugins) or stackcheck's CLI takes. The same for every
command the suite's own code prints: its modules exist and its options are taken."""

import ast
import re
from pathlib import Path

import pytest

from stackcheck.claims import catalogue
from stackcheck.run import invocation

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
FOLDERS = r"(?:\.ci|docs|tests_\w+|stackcheck|fixtures|baselines|examples|course|mojo|constraints)"
PATH = re.compile(rf"{FOLDERS}/[\w./-]*")
TEST_FILE = re.compile(r"test_\w+\.py")
CLAIM = re.compile(r"S\d+\.\d+-[a-z0-9-]+|MC\d\d|Q\d|X-numerics")
PLACEHOLDER = re.compile(r"\b[A-Z]{2,}\b|[*<>{}]|\.\.\.")  # NAME, DIR, <cc>, a glob
COMMAND = re.compile(r"(?:python3? -m pytest|pytest|stackcheck|(?:bash )?\.ci/\w+)\b")


def spans(page: Path) -> list[str]:
    """What the page writes as code: its `spans` and the lines of its fenced blocks."""
    text = page.read_text(encoding="utf-8")
    fenced = [line for block in re.findall(r"```[^\n]*\n(.*?)```", text, re.S) for line in block.splitlines()]
    return re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)) + fenced


def suite_files() -> set[str]:
    return {p.name for p in ROOT.rglob("test_*.py") if ".git" not in p.parts and "build" not in p.parts}


def cli_options() -> set[str]:
    """Every option stackcheck's command line declares (its add_argument calls)."""
    tree = ast.parse((ROOT / "stackcheck" / "cli.py").read_text(encoding="utf-8"))
    return {
        a.value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument"
        for a in call.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
    }


def stale(pytestconfig) -> list[str]:
    known_ids, tests = set(catalogue.catalogue()), suite_files()
    options = set(invocation._actions(pytestconfig) or ()) | cli_options()
    found = []
    for page in PAGES:
        for span in spans(page):
            words = [w.strip(",.;:()'\"") for w in span.split()]
            for word in words:
                if PATH.fullmatch(word) and not PLACEHOLDER.search(word) and not (ROOT / word.split("::")[0]).exists():
                    found.append(f"{page.name}: no file or folder {word}")
                elif TEST_FILE.fullmatch(word) and word not in tests:
                    found.append(f"{page.name}: no test file {word}")
                elif CLAIM.fullmatch(word) and word not in known_ids:
                    found.append(f"{page.name}: no claim {word}")
            if COMMAND.match(span.strip()):
                for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span):
                    if option not in options:
                        found.append(f"{page.name}: no option {option} (in `{span.strip()[:80]}`)")
    return sorted(set(found))


def test_every_page_names_only_what_exists(pytestconfig):
    found = stale(pytestconfig)
    assert not found, "the docs name what no longer exists:\n" + "\n".join(found)


def test_a_page_that_names_what_is_gone_is_found(pytestconfig, monkeypatch, tmp_path):
    """The check itself: a page naming a removed file, claim, test file and option is caught, each."""
    page = tmp_path / "gone.md"
    page.write_text(
        "See `stackcheck/gone.py`, `test_gone.py` and claim `S9.9-gone`; run `pytest --gone-option`.\n"
        "```\npytest --homework=hw tests_math/gone/\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setitem(globals(), "PAGES", [page])
    found = stale(pytestconfig)
    for gone in ("stackcheck/gone.py", "test_gone.py", "S9.9-gone", "--gone-option", "tests_math/gone/"):
        assert any(gone in line for line in found), (gone, found)
    assert not any("--homework" in line for line in found), found


def printed_commands() -> list[tuple[str, str]]:
    """(file, text) of each string in stackcheck's code that holds a command a user is told to run."""
    found = []
    for path in sorted((ROOT / "stackcheck").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and COMMAND.search(node.value):
                found.append((str(path.relative_to(ROOT)), node.value))
    return found


def wrong_commands(commands: list[tuple[str, str]], pytestconfig) -> list[str]:
    """Each `python -m MODULE` this Python cannot find, and each option after pytest or stackcheck
    that neither takes, in ``commands``."""
    import importlib.util

    options = set(invocation._actions(pytestconfig) or ()) | cli_options()
    wrong = []
    for where, text in commands:
        for module in re.findall(r"python3? -m ([\w.]+)", text):
            if importlib.util.find_spec(module) is None:
                wrong.append(f"{where}: no module {module} in {text[:80]!r}")
        for span in re.findall(r"(?:pytest|stackcheck)\b[^\n`]*", text):
            unknown = [o for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span) if o not in options]
            wrong += [f"{where}: no option {o} in {text[:80]!r}" for o in unknown]
    return wrong


def test_every_command_the_code_prints_names_what_exists(pytestconfig):
    """The commands the suite prints (hints, usage errors, rerun prefixes): each names a module this
    Python finds and options its program takes."""
    commands = printed_commands()
    assert len(commands) >= 10, commands  # the scan reads the code at all
    wrong = wrong_commands(commands, pytestconfig)
    assert not wrong, "\n".join(wrong)


def test_a_printed_command_naming_what_is_gone_is_found(pytestconfig):
    gone = [("x.py", "rerun: python -m stackcheck.gone_module"), ("y.py", "python -m pytest --gone-flag tests_math")]
    found = wrong_commands(gone, pytestconfig)
    assert len(found) == 2 and "gone_module" in found[0] and "--gone-flag" in found[1], found
