"""MAX is handed the suite's Mojo package built, never as a folder (course §10.3, §10.4). Handed a
folder, MAX precompiles it at each graph, op library and session compile, every process to one
temporary file per folder path that each replaces: two xdist workers compiling graphs of one package
failed one with "could not lower LIT to KGEN: No such file or directory". A built package is
published once per content, by whichever process or thread gets there first, and never replaced."""

import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.impl import mojo_source, reference
from stackcheck.impl.loader import Impl
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.toolchains import mojo_build

pytestmark = pytest.mark.meta

# the places MAX 26.7 turns a source folder into a package: each is refused here
BUILDS_A_FOLDER = ("max.graph.graph", "max.engine.api", "max.experimental.custom")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def package(folder: Path, body: str = "def f(): pass\n") -> Path:
    (folder / "study_relu").mkdir(parents=True)
    (folder / "study_relu" / "__init__.mojo").write_text(body)
    return folder / "study_relu"


def test_the_suites_graphs_and_probes_hand_max_a_built_package(cache, monkeypatch):
    need("max")
    need("mojo")
    import importlib

    from mojo.paths import is_mojo_binary_package_path

    def refused(path):
        raise AssertionError(f"MAX was handed the folder {path} to precompile")

    for module in BUILDS_A_FOLDER:
        monkeypatch.setattr(importlib.import_module(module), "_build_mojo_source_package", refused, raising=False)
    impl = Impl(reference)
    max_graphs._graph("structure", impl, True, "structure")  # a graph with the Mojo op: MAX reads its package
    received = []

    def probe(path, *args):
        received.append(path)
        return importlib.import_module("max.graph").KernelLibrary().load_paths([path])  # as the torch bridge

    probe.__module__ = mojo_source.PROBES
    mojo_source.probe(probe, impl)
    assert len(received) == 1 and is_mojo_binary_package_path(Path(received[0])), received
    assert cache in Path(received[0]).parents


PUBLISH = """
import json, sys
from stackcheck.toolchains import mojo_build
print(json.dumps(str(mojo_build.stable_package(sys.argv[1]))))
"""


def test_processes_and_threads_at_once_publish_one_package_that_is_never_replaced(tmp_path, cache):
    """Two fresh Python processes beside two threads of this one: xdist workers are processes, and
    the package they share is published by whichever finishes first."""
    need("mojo")
    given = package(tmp_path / "clone")
    env = {**os.environ, "STACKCHECK_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
    children = [
        subprocess.Popen([sys.executable, "-c", PUBLISH, str(given)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        mine = list(pool.map(mojo_build.stable_package, [given, given]))
    theirs = [Path(json.loads(child.communicate(timeout=300)[0])) for child in children]
    assert len(set(mine + theirs)) == 1, mine + theirs
    built = mine[0]
    assert built.suffix == ".mojoc" and built.stem.startswith("study_relu_"), "a module named by its content"
    published = [p for p in (cache / "mojo" / "packages").iterdir()]
    assert published == [built.parent], f"one folder, no staging left: {published}"
    inode = built.stat().st_ino
    again = subprocess.run([sys.executable, "-c", PUBLISH, str(given)], capture_output=True, text=True, env=env)
    assert Path(json.loads(again.stdout)) == built and built.stat().st_ino == inode, "found, not built again"


def test_a_package_that_does_not_build_goes_to_max_as_given(tmp_path, cache):
    need("mojo")
    broken = package(tmp_path / "clone", "fn f( -> :\n")
    assert mojo_build.stable_package(broken) == broken, "MAX's own error names the line"
    assert not any((cache / "mojo" / "packages").iterdir()), "and nothing is left in the cache"
