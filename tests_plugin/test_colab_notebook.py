"""examples/colab_selfcheck.ipynb runs headless, every cell, the install cell included, as Colab
would run it (issue 53 item 7): in a fresh virtual environment over this Python's packages (as
Colab's torch, JAX and Triton), it installs stackcheck from a wheel built here, keeps the runtime's
NumPy, says which stacks are inside the declared ranges, verifies §2.2 on the CPU, skips its CUDA
cell with the reason where there is no GPU, and shows the report inline, or pytest's output where
there is none."""

import json
import os
import re
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from stackcheck.claims import mutation
from stackcheck.paths import venvs

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "colab_selfcheck.ipynb"
PLACEHOLDER = "git+https://github.com/YOUR-COURSE/stackcheck"


@pytest.fixture
def notebook_modules():
    nbformat = pytest.importorskip("nbformat", reason="pip install 'stackcheck[notebook]'")
    nbclient = pytest.importorskip("nbclient", reason="pip install 'stackcheck[notebook]'")
    return nbformat, nbclient


def kernel_in_fresh_venv(tmp_path) -> str:
    """A kernel whose Python is a new venv seeing this Python's packages (Colab's preinstalled ones)."""
    python = str(venvs.derived(tmp_path / "venv"))
    spec = tmp_path / "jupyter" / "kernels" / "fresh"
    spec.mkdir(parents=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "fresh", "language": "python"}))
    return python


def execute(modules, notebook, tmp_path, kernel="python3"):
    _, nbclient = modules
    client = nbclient.NotebookClient(
        notebook, timeout=900, kernel_name=kernel, resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    return ["".join(o.get("text", "") for o in cell.get("outputs", [])) for cell in notebook.cells]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A fresh process by necessity: stackcheck's wheel, built here by pip."""
    dist = tmp_path_factory.mktemp("dist")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)]
    if subprocess.run([*build, "--no-build-isolation"]).returncode != 0:  # an older setuptools here: pip fetches one
        subprocess.run(build, check=True)
    (built,) = dist.glob("stackcheck-*.whl")
    return built


def from_wheel(notebook_modules, wheel: Path, cells: slice = slice(None)):
    """The notebook (its ``cells``) with SOURCE set to ``wheel``, as an instructor sets it."""
    nbformat, _ = notebook_modules
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert PLACEHOLDER in notebook.cells[1].source, "SOURCE is set in the first code cell, where a user sees it"
    notebook.cells[1].source = notebook.cells[1].source.replace(PLACEHOLDER, str(wheel))
    notebook.cells = notebook.cells[cells]
    return notebook


def test_every_cell_runs_from_a_wheel_built_here(notebook_modules, wheel, tmp_path, monkeypatch):
    """A fresh process by necessity: the notebook's kernel is a new venv's Python, as on Colab, that installs
    the wheel built here."""
    for name in set(mutation.PRIVATE) & set(os.environ):
        monkeypatch.delenv(name)  # the notebook's pytest is a run of its own, not this run's worker
    python = kernel_in_fresh_venv(tmp_path)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    notebook = from_wheel(notebook_modules, wheel)
    printed = "\n".join(execute(notebook_modules, notebook, tmp_path, kernel="fresh"))
    assert re.search(rf"stackcheck \S+ from {re.escape(str(tmp_path / 'venv'))}/lib/", printed), printed[-3000:]
    numpy_now = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True)
    assert numpy_now.stdout.strip() == version("numpy"), "the runtime's NumPy stays as it was"
    for stack in ("torch", "jax", "triton"):
        assert re.search(rf"^{stack} \S+: (inside|OUTSIDE) the declared range", printed, re.M), printed[-3000:]
    assert re.search(r"\+ verified +S2\.2-hand ", printed) and "CPU part: exit code 0" in printed, printed[-3000:]
    gpu = "CUDA self-check: exit code 0" in printed
    assert gpu or "skipped: no CUDA device visible to torch" in printed, printed[-3000:]
    shown = [o for o in notebook.cells[-1].outputs if "text/html" in o.get("data", {})]
    assert shown and "S2.2-hand" in shown[0]["data"]["text/html"], "the report is shown inline"


OLDER_NUMPY = "2.0.2"  # Colab's runtime NumPy of 2025, below the range stackcheck declares


def test_a_runtime_numpy_outside_the_declared_range_is_replaced_and_said(
    notebook_modules, wheel, tmp_path, monkeypatch
):
    """A fresh process by necessity: the kernel's venv holds an older NumPy than stackcheck declares, as
    Colab's runtime did (a pin to it stopped pip); the install cell installs one inside the range and
    says so, and the version cell runs."""
    python = kernel_in_fresh_venv(tmp_path)
    older = subprocess.run([python, "-m", "pip", "install", "-q", f"numpy=={OLDER_NUMPY}"], capture_output=True)
    if older.returncode != 0:
        pytest.skip(f"pip could not install NumPy {OLDER_NUMPY} (no network?): {older.stderr.decode()[-300:]}")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    printed = "\n".join(execute(notebook_modules, from_wheel(notebook_modules, wheel, slice(3)), tmp_path, "fresh"))
    assert f"NumPy {OLDER_NUMPY} is outside the range stackcheck declares: pip installs NumPy" in printed, printed
    now = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True)
    declared = next(Requirement(r) for r in requires("stackcheck") if Requirement(r).name == "numpy")
    assert declared.specifier.contains(now.stdout.strip()), (now.stdout, declared)
    assert re.search(r"^torch \S+: (inside|OUTSIDE) the declared range", printed, re.M), printed[-3000:]


def test_without_a_source_the_install_cell_says_what_to_set(notebook_modules, tmp_path):
    nbformat, nbclient = notebook_modules
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells = notebook.cells[1:2]
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="Set SOURCE in this cell"):
        execute(notebook_modules, notebook, tmp_path)


def test_where_pytest_wrote_no_report_the_last_cell_shows_what_it_printed(notebook_modules, tmp_path):
    nbformat, _ = notebook_modules
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    ran = nbformat.v4.new_code_cell('report = "selfcheck-cpu"\nOUTPUT = {report: "ERROR: usage: a bad option"}')
    notebook.cells = [ran, notebook.cells[-1]]
    printed = "\n".join(execute(notebook_modules, notebook, tmp_path))
    assert "pytest wrote no report (selfcheck-cpu.html)" in printed and "a bad option" in printed, printed
