"""A graded submission's Mojo package crosses as its files and is built and run only by the launcher,
a sandboxed worker of an empty file (stackcheck.impl.mojo_source, issue 50 item 2); the judge, and
every process it starts, imports no file (loader.JUDGE), so no test can run the submission outside
its sandbox. Any tree of plain files survives the trip; links, FIFOs, oversize packages and names
that leave the package are refused; a graded honest package passes, a wrong one fails, and the
suite's own folder is borrowed (own run) or not there at all (graded)."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.grading import wire
from stackcheck.impl import mojo_source
from stackcheck.impl.loader import JUDGE
from stackcheck.impl.mojo_source import PackageRefused
from stackcheck.paths import data

pytestmark = pytest.mark.meta
ROOT = Path(__file__).resolve().parent.parent
NAME = st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..", "__pycache__")
)
TREES = st.dictionaries(st.lists(NAME, min_size=1, max_size=3).map("/".join), st.binary(max_size=64), max_size=6)


def _tree_fits(tree: dict) -> bool:
    """No file is also a folder of another."""
    return not any(a != b and b.startswith(a + "/") for a in tree for b in tree)


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(tree=TREES.filter(_tree_fits).filter(bool))
def test_any_tree_of_plain_files_crosses_as_data_and_is_written_back_the_same(tree, tmp_path_factory):
    source, target = tmp_path_factory.mktemp("source") / "pkg", tmp_path_factory.mktemp("target")
    for rel, content in tree.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_bytes(content)
    name, files = mojo_source.read(str(source))
    package = mojo_source.shipped(name, [(rel, memoryview(content)) for rel, content in files])
    with pytest.raises(TypeError):
        os.fspath(package)  # no path: nothing in the judge can hand it to a compiler
    written = mojo_source.written(package, target)
    found = {p.relative_to(written).as_posix(): p.read_bytes() for p in written.rglob("*") if p.is_file()}
    assert found == tree


def _link(folder: Path) -> Path:
    (folder / "pkg").mkdir()
    (folder / "elsewhere.mojo").write_text("x")
    (folder / "pkg" / "__init__.mojo").symlink_to(folder / "elsewhere.mojo")
    return folder / "pkg"


def _linked_folder(folder: Path) -> Path:
    (folder / "real").mkdir()
    (folder / "real" / "a.mojo").write_text("x")
    (folder / "pkg").symlink_to(folder / "real")
    return folder / "pkg"


def _many(folder: Path) -> Path:
    for i in range(mojo_source.FILES + 1):
        (folder / f"f{i}.mojo").write_text("x")
    return folder


def _big(folder: Path) -> Path:
    (folder / "big.mojo").write_bytes(b"x" * (mojo_source.BYTES + 1))
    return folder


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe.mojo")
    return folder


REFUSED = {
    "a link inside the folder": _link,
    "the folder itself a link": _linked_folder,
    "a FIFO": _fifo,
    "more files than the cap": _many,
    "more bytes than the cap": _big,
    "an empty folder": lambda f: f,
    "no such path": lambda f: f / "missing",
    "not a path at all": lambda f: 42,
}


@pytest.mark.parametrize("make", REFUSED.values(), ids=REFUSED)
def test_what_is_not_a_plain_package_is_refused_in_one_line(make, tmp_path):
    with pytest.raises(PackageRefused, match="mojo_package") as refused:
        mojo_source.read(make(tmp_path))
    assert "\n" not in str(refused.value)


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.sampled_from(["..", ".", "", "a", "/", "\0", "b.mojo"]), min_size=1, max_size=4))
def test_a_name_that_could_leave_the_package_is_refused(parts, tmp_path_factory):
    """Whatever a worker names a file, the launcher writes inside the package's folder or nowhere."""
    rel = "/".join(parts)
    folder = tmp_path_factory.mktemp("written")
    try:
        package = mojo_source.shipped("pkg", [(rel, b"x")])
    except ValueError:
        return
    written = mojo_source.written(package, folder)
    assert all(p.resolve().is_relative_to(written.resolve()) for p in folder.rglob("*") if p.is_file())


def test_every_decoder_method_that_is_no_tag_is_refused():
    """A worker's tree names only node kinds: a Decoder helper (``_buffer``, ``_argument``) is no tag."""
    decoder = wire.Decoder([memoryview(b"")])
    helpers = {n[1:] for n in dir(wire.Decoder) if n.startswith("_") and not n.startswith("__")}
    assert wire.TAGS <= helpers, wire.TAGS - helpers
    for name in sorted(helpers - wire.TAGS):
        with pytest.raises(wire.WireError, match="unknown tag"):
            decoder([name, 0])


def test_the_judge_and_every_process_it_starts_import_no_file(tmp_path):
    """loader.JUDGE set (a graded run's judge sets it): a child that would import the submission (MAX's
    GPU compile, a fresh interpreter) is refused in one line, and the file never ran."""
    marker = tmp_path / "ran"
    homework = tmp_path / "homework.py"
    homework.write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    code = f"from stackcheck.impl.loader import load_module\nload_module({str(homework)!r})"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, JUDGE: "1"}, timeout=120
    )
    assert done.returncode != 0 and "not imported: this process is a graded run's judge" in done.stderr
    assert not marker.exists()


def test_every_claim_test_that_starts_the_implementation_elsewhere_is_judge_traces():
    """A test that hands the implementation's file to another process (``impl.module``, MAX's GPU
    compile of its graph) cannot be graded: it says so (judge_traces), so every homework run skips it."""
    unmarked = []
    for folder in ("tests_math", "tests_ir", "tests_runtime", "tests_kernels", "tests_hardware", "tests_course"):
        for path in sorted((ROOT / folder).glob("test_*.py")):
            text = path.read_text(encoding="utf-8")
            if "impl.module" not in text and "compiled_for_gpu(impl" not in text:
                continue
            for node in ast.parse(text).body:
                if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                    continue
                marks = [ast.unparse(d) for d in node.decorator_list]
                if "impl" in [a.arg for a in node.args.args] and not any("judge_traces" in m for m in marks):
                    unmarked.append(f"{path.relative_to(ROOT)}::{node.name}")
    assert not unmarked, f"tests that start the implementation in another process, not judge_traces: {unmarked}"


HOMEWORK = """ASSIGNED = ("kernels",)
from pathlib import Path


def mojo_package():
    return {where}
"""


def _submission(folder: Path, where: str, kernel: str | None = None) -> Path:
    folder.mkdir()
    (folder / "homework.py").write_text(HOMEWORK.format(where=where))
    if kernel is not None:
        (folder / "my_relu").mkdir()
        (folder / "my_relu" / "__init__.mojo").write_text(kernel)
    return folder


def _outcome(folder: Path, graded: bool) -> tuple[str, str]:
    report = folder.parent / f"{folder.name}-report.json"
    command = [sys.executable, "-m", "pytest", f"--homework={folder}", "-p", "no:cacheprovider", "-m", "cpu"]
    command += ["--homework-graded"] if graded else []
    command += [f"--curriculum-report={report}", "tests_kernels/test_s10_3_no_backward.py"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    tests = [t for claim in json.loads(report.read_text())["claims"] for t in claim.get("tests", [])]
    assert len(tests) == 1, done.stdout[-3000:]
    return tests[0]["outcome"], str(tests[0].get("message", "")) + done.stdout[-3000:]


@pytest.mark.max
@pytest.mark.mojo
def test_a_graded_package_is_judged_on_what_the_launcher_built(tmp_path):
    """Graded (sandboxed where Bubblewrap runs): the honest package passes S10.3's test, a kernel that
    computes max(z, -1) fails it, and the suite's own folder is not there (refused); in the student's own run
    the suite's folder is borrowed. Fresh processes, both runs: the graded one as `stackcheck grade` starts
    its judge, the student's as typed."""
    pytest.importorskip("max.experimental.torch")
    own = (data.path("mojo", "study_relu") / "__init__.mojo").read_text().replace("# Course", "# mine, after")
    wrong = own.replace("SIMD[z.dtype, width](0)", "SIMD[z.dtype, width](-1)")
    assert wrong != own
    local = 'Path(__file__).parent / "my_relu"'
    suites = repr(str(data.path("mojo", "study_relu")))
    honest = _outcome(_submission(tmp_path / "honest", local, own), graded=True)
    assert honest[0] == "passed", honest[1]
    bad = _outcome(_submission(tmp_path / "wrong", local, wrong), graded=True)
    assert bad[0] == "failed" and "custom ReLU" in bad[1], bad[1]
    borrowed = _outcome(_submission(tmp_path / "borrowed", suites), graded=False)
    assert borrowed[0] == "failed" and "borrowed" in borrowed[1], borrowed[1]
    from stackcheck.grading import sandbox

    if sandbox.bubblewrap()[0] is not None:
        hidden = _outcome(_submission(tmp_path / "suites", suites), graded=True)
        assert hidden[0] == "failed" and "mojo_package returned" in hidden[1], hidden[1]
