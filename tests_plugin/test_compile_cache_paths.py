"""Compile caches that survive a new checkout (issue 36): MAX caches a graph's compile under the paths
of its custom extensions, so the suite hands MAX a Mojo package, and the course gate its listings'
folder, at paths named by content or fixed, never by where the checkout or a temporary folder is."""

import contextlib
import io
from pathlib import Path

import pytest

from stackcheck.stacks.available import need
from stackcheck.toolchains import mojo_build

pytestmark = pytest.mark.meta


def package(folder: Path, body: str) -> Path:
    (folder / "study_relu").mkdir(parents=True)
    (folder / "study_relu" / "__init__.mojo").write_text(body)
    return folder / "study_relu"


def test_a_package_from_any_folder_reaches_max_at_one_path_per_content(tmp_path, monkeypatch):
    need("mojo")
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    one = mojo_build.stable_package(package(tmp_path / "clone-a", "def f(): pass\n"))
    two = mojo_build.stable_package(package(tmp_path / "elsewhere" / "clone-b", "def f(): pass\n"))
    other = mojo_build.stable_package(package(tmp_path / "clone-c", "def g(): pass\n"))
    assert one == two and one.stem.startswith("study_relu_"), "the same content from two checkouts: one path"
    assert other != one, "another content: another path"
    (tmp_path / "named" / "kernels").mkdir(parents=True)
    (tmp_path / "named" / "kernels" / "__init__.mojo").write_text("def f(): pass\n")
    renamed = mojo_build.stable_package(tmp_path / "named" / "kernels")
    assert renamed.stem.startswith("kernels_") and renamed != one, "the same files under another name: another module"
    assert one.is_file() and (tmp_path / "cache") in one.parents
    assert mojo_build.stable_package(one) != one and mojo_build.stable_package(one).read_bytes() == one.read_bytes()
    missing = tmp_path / "nowhere"
    assert mojo_build.stable_package(missing) == missing, "what is not there is MAX's to refuse, as given"


def test_a_cache_that_cannot_be_written_costs_speed_not_the_run(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("STACKCHECK_CACHE", str(blocked))
    given = package(tmp_path / "clone", "def f(): pass\n")
    assert mojo_build.stable_package(given) == given
    pytest.importorskip("sybil", reason="the course gate needs Sybil (pip install sybil)")
    from stackcheck.course import listings

    namespace = {}
    listings._setup(namespace)
    assert namespace["__workdir__"].is_dir() and blocked not in namespace["__workdir__"].parents
    listings._teardown(namespace)


def test_the_course_folder_is_the_same_from_run_to_run_and_never_shared(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    pytest.importorskip("sybil", reason="the course gate needs Sybil (pip install sybil)")
    from stackcheck.course import listings

    first = {}
    listings._setup(first)
    (first["__workdir__"] / "left.txt").write_text("from an earlier run")
    held = {}
    listings._setup(held)  # a second process while the first runs: a folder of its own
    assert held["__workdir__"] != first["__workdir__"]
    listings._teardown(held)
    listings._teardown(first)
    again = {}
    listings._setup(again)
    assert again["__workdir__"] == first["__workdir__"], "the next run: the same path, so MAX's cache hits"
    assert not list(again["__workdir__"].iterdir()), "and empty: nothing of the last run is read"
    listings._teardown(again)


SHOW_TEMP = "import tempfile\nprint(tempfile.gettempdir())\n"


def temp_seen(listings, tmp_path: Path, monkeypatch, run: str, body: str) -> tuple[str, str, str]:
    """The temporary folder a MAX Python listing, a MAX shell listing (``python show_temp.py``) and a
    torch listing see, in a run whose own TMPDIR is new (as ``.ci/run`` gives each), with
    ``kernels/__init__.mojo`` = ``body`` and a standalone Mojo program beside it."""
    import tempfile

    own = tmp_path / f"ci-temp-{run}"
    own.mkdir()
    monkeypatch.setenv("TMPDIR", str(own))
    monkeypatch.setattr(tempfile, "tempdir", None)
    ns = {}
    listings._setup(ns)
    try:
        (ns["__workdir__"] / "kernels").mkdir()
        (ns["__workdir__"] / "kernels" / "__init__.mojo").write_text(body)
        (ns["__workdir__"] / f"program_{run}.mojo").write_text("def main(): pass\n")  # no package of MAX's
        ns["__ran__"], ns["__notes__"] = {}, {}
        printed = []
        for listing in (
            listings.Listing("10.4", "python", "max", "cpu", SHOW_TEMP, 1, file="show_temp.py"),
            listings.Listing("10.4", "shell", "max", "cpu", "python show_temp.py", 1),
            listings.Listing("8.2", "python", "torch", "cpu", SHOW_TEMP, 1),
        ):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                listings.run(listing, ns, "week02.md")
            printed.append(out.getvalue().strip())
    finally:
        listings._teardown(ns)
    assert tempfile.gettempdir() == str(own), "Python's own, once the listings ran"
    assert printed[2] == str(own), "a listing of another stack keeps the run's temporary folder"
    return printed[0], printed[1], printed[2]


def test_a_listing_finds_maxs_precompiled_package_again_in_a_new_temp_folder(tmp_path, monkeypatch):
    """MAX precompiles §10.4's kernels folder into the temporary folder and caches the graph under
    that file's path: a run with a new TMPDIR (each of .ci/run's) still gives its MAX listings, Python
    and shell alike, one folder of the user's cache per content of the Mojo package."""
    pytest.importorskip("sybil", reason="the course gate needs Sybil (pip install sybil)")
    from stackcheck.course import listings

    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    first = temp_seen(listings, tmp_path, monkeypatch, "a", "def f(): pass\n")
    again = temp_seen(listings, tmp_path, monkeypatch, "b", "def f(): pass\n")
    changed = temp_seen(listings, tmp_path, monkeypatch, "c", "def g(): pass\n")
    assert first[0] == first[1] == again[0] == again[1], (first, again)
    assert Path(first[0]).is_relative_to(tmp_path / "cache"), first
    assert changed[0] == changed[1] != first[0], "a changed Mojo package: another folder, compiled anew"


def test_a_cached_program_is_reused_only_by_the_compiler_install_that_built_it(tmp_path, monkeypatch):
    """A built program finds Mojo's runtime libraries where its compiler was installed (its RUNPATH):
    a program cached by a venv since removed would not start, so that place is part of its key; text
    products (assembly, LLVM IR) do not name it and are shared."""
    need("mojo")
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    src, sizes = mojo_build.source("simd_relu.mojo"), {"WIDTH": 4}
    real = mojo_build.mojo_executable()
    other = tmp_path / "another-venv" / "bin" / "mojo"
    other.parent.mkdir(parents=True)
    other.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    other.chmod(0o755)
    keys = {emit: mojo_build.build_key(src, emit, mojo_build.TARGET, sizes) for emit in ("exe", "llvm")}
    monkeypatch.setattr(mojo_build, "mojo_executable", lambda: str(other))
    assert mojo_build.build_key(src, "exe", mojo_build.TARGET, sizes) != keys["exe"], "another install: another program"
    assert mojo_build.build_key(src, "llvm", mojo_build.TARGET, sizes) == keys["llvm"], "the same text from any install"
    program = mojo_build.build(src, emit="exe", sizes=sizes, target=mojo_build.TARGET)
    assert program.parent.name == f"simd_relu-{mojo_build.build_key(src, 'exe', mojo_build.TARGET, sizes)}"
    import subprocess

    assert subprocess.run([str(program)], capture_output=True, timeout=60).returncode == 0
