"""The commands this project runs write every path-taking stackcheck option with '=': given after a
space, pytest takes the value for a test path while it picks its root folder (before stackcheck's
options are known), and the plugin refuses the run once that path exists outside the folder (issue
55: `.ci/gpu` run again with the same GPU_LOG stopped in 2 s at `--curriculum-report "$log/report.json"`)."""

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = ROOT / "stackcheck" / "plugin" / "options.py"  # read, not imported: a self-test
NOT_PATHS = {"DEVICE_OR_STACK", "PART", "K/N"}  # the metavars of the options whose value is no path


def path_options() -> tuple[str, ...]:
    """The plugin's own list (stackcheck.plugin.options.PATH_OPTIONS)."""
    tree = ast.parse(OPTIONS.read_text(encoding="utf-8"))
    (found,) = [n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "PATH_OPTIONS"]
    return ast.literal_eval(found)


def test_the_plugins_list_holds_every_option_that_takes_a_path():
    """Each option options.py adds with a value (a metavar) that is not one of NOT_PATHS is in PATH_OPTIONS."""
    calls = [n for n in ast.walk(ast.parse(OPTIONS.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]
    valued = {
        c.args[0].value
        for c in calls
        if getattr(c.func, "attr", "") == "addoption"
        for k in c.keywords
        if k.arg == "metavar" and k.value.value not in NOT_PATHS
    }
    assert valued and valued == set(path_options()), f"PATH_OPTIONS misses {valued - set(path_options())}"


def commands() -> dict[str, str]:
    """The .ci/ scripts, the README's bash blocks and the CI template, without comments."""
    texts = {f".ci/{p.name}": p.read_text(encoding="utf-8") for p in sorted((ROOT / ".ci").iterdir()) if p.is_file()}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    texts["README.md"] = "\n".join(re.findall(r"```bash\n(.*?)```", readme, re.S))
    texts["examples/ci/course-gate.yml"] = (ROOT / "examples" / "ci" / "course-gate.yml").read_text(encoding="utf-8")
    return {name: re.sub(r"(?m)(^|\s)#.*$", "", text).replace("\\\n", " ") for name, text in texts.items()}


def spaced(text: str) -> list[str]:
    """The path options of ``text`` whose value follows a space (a next word that is no option)."""
    flags = "|".join(re.escape(o) for o in path_options())
    return re.findall(rf"(?:{flags})[ \t]+[^-\s]\S*", text)


def test_a_path_option_after_a_space_is_found():
    assert spaced('pytest --curriculum-report "$log/report.json" --course --require cuda') == [
        '--curriculum-report "$log/report.json"'
    ]
    assert spaced("pytest --course=shipped --baseline=b.json --gpu-table --mojo-prebuilt=.prebuilt") == []


def test_the_ci_scripts_write_every_path_option_with_an_equals_sign():
    scripts = commands()
    assert ".ci/gpu" in scripts and ".ci/run" in scripts
    found = {name: hits for name, text in scripts.items() if (hits := spaced(text))}
    assert not found, f"write --option=value: {found}"
