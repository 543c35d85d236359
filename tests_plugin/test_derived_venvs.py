"""An environment a self-test makes (a notebook's kernel, a clone's `.venv`, `.ci/compat`'s set) sees
this Python's packages, also where this Python is a venv whose base has none of them: a newcomer's
set-up, and CI's (issue 79). Each test starts fresh Python processes, the venvs' own interpreters:
what a new interpreter's site module finds is what is judged."""

import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.claims import fresh_interpreters
from stackcheck.paths import venvs

pytestmark = pytest.mark.meta

PROBE = "probe_only_in_the_outer_venv"


def outer_venv(tmp_path):
    """A venv over this Python's packages holding one more package of its own (which the base
    interpreter lacks): the newcomer's venv in small."""
    python = venvs.derived(tmp_path / "outer")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / f"{PROBE}.py").write_text("FOUND = True\n")
    return python


def from_outer(python, code):
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120)


def sees_probe(python) -> bool:
    return from_outer(python, f"import {PROBE}").returncode == 0


def test_a_derived_venv_sees_every_package_of_the_venv_that_made_it(tmp_path):
    outer = outer_venv(tmp_path)
    inner = from_outer(outer, f"from stackcheck.paths import venvs; print(venvs.derived({str(tmp_path / 'inner')!r}))")
    assert inner.returncode == 0, inner.stderr[-2000:]
    inner = inner.stdout.strip()
    assert sees_probe(inner), "the derived venv lacks a package of the venv that made it"
    listing = "import importlib.metadata as m; print(sorted({(d.name, d.version) for d in m.distributions()}))"
    assert from_outer(inner, listing).stdout == from_outer(outer, listing).stdout, "not the same distributions"
    installs = from_outer(
        inner, "import sys, sysconfig; print(sysconfig.get_paths()['purelib'].startswith(sys.prefix))"
    )
    assert installs.stdout.strip() == "True", "pip in the derived venv installs into it"


def test_the_way_it_replaces_misses_them(tmp_path):
    """The control: `venv --system-site-packages` made by a venv's Python (the old notebook kernel's
    way, which `venv.create` with ``system_site_packages`` is) sees the base interpreter's packages, and so
    lacks the outer venv's."""
    outer = outer_venv(tmp_path)
    made = from_outer(outer, f"import venv; venv.create({str(tmp_path / 'old')!r}, system_site_packages=True)")
    assert made.returncode == 0, made.stderr[-2000:]
    assert sees_probe(outer) and not sees_probe(tmp_path / "old" / "bin" / "python")


MAKES = '''
"""Each test may start a fresh Python: what the guard watches."""
import subprocess, sys, venv


def test_old_notebook_kernel(tmp_path):
    old = ["-m", "venv", "--without-pip", "--system-site-packages"]
    subprocess.run([sys.executable, *old, str(tmp_path / "v")], check=True)


def test_venv_module(tmp_path):
    venv.create(tmp_path / "v", system_site_packages=True)


def test_derived(tmp_path):
    from stackcheck.paths import venvs
    venvs.derived(tmp_path / "v")
'''


def test_a_self_test_that_makes_a_venv_by_itself_fails(pytester, monkeypatch):
    """The guard of stackcheck.claims.fresh_interpreters fails the old notebook test's way, and any
    other venv made without stackcheck.paths.venvs; the project's folder stands for the suite's."""
    monkeypatch.setattr(fresh_interpreters, "TESTS", (pytester.path,))
    pytester.makepyfile(test_makes=MAKES)
    result = pytester.runpytest("-p", "stackcheck.claims.fresh_interpreters", "-q")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*test_old_notebook_kernel made a virtual environment by itself (*-m venv*"])
    result.stdout.fnmatch_lines(["*test_venv_module made a virtual environment by itself (venv.create(*"])


@pytest.mark.parametrize(
    "args, makes",
    [
        (["python3", "-m", "venv", "x"], True),
        ([sys.executable, "-m", "virtualenv", "x"], True),
        (["/usr/bin/virtualenv", "x"], True),
        ("python -m venv --system-site-packages x", True),
        ([sys.executable, "-m", "pip", "install", "venv"], False),
        ([sys.executable, "-c", "import venv"], False),
    ],
)
def test_making_a_venv_is_recognized_in_a_command(args, makes):
    assert fresh_interpreters.makes_venv(args) is makes


def test_the_module_makes_one_from_the_command_line(tmp_path):
    """Its printed usage runs: `python -m stackcheck.paths.venvs WHERE`, in a fresh interpreter as typed."""
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck.paths.venvs", str(tmp_path / "v")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert from_outer(done.stdout.strip(), "import pytest").returncode == 0
    usage = subprocess.run([sys.executable, "-m", "stackcheck.paths.venvs"], capture_output=True, text=True)
    assert usage.returncode != 0 and "usage: python -m stackcheck.paths.venvs WHERE" in usage.stderr
