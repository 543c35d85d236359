"""examples/colab_selfcheck.ipynb runs headless, cell by cell, as Colab would run it: on this machine
with no GPU its CUDA cell skips with its reason, the CPU part verifies §2.2, and the last cell shows
the HTML report inline."""

import os
import re
from pathlib import Path

import pytest

from stackcheck.claims import mutation

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent


def test_the_colab_notebook_runs_and_shows_its_report(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="pip install 'stackcheck[notebook]'")
    nbclient = pytest.importorskip("nbclient", reason="pip install 'stackcheck[notebook]'")
    for name in set(mutation.PRIVATE) & set(os.environ):
        monkeypatch.delenv(name)  # the notebook's pytest is a run of its own, not this run's worker
    notebook = nbformat.read(ROOT / "examples" / "colab_selfcheck.ipynb", as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()
    outputs = ["".join(o.get("text", "") for o in cell.get("outputs", [])) for cell in notebook.cells]
    printed = "\n".join(outputs)
    assert re.search(r"\+ verified +S2\.2-hand ", printed) and "CPU part: exit code 0" in printed, printed[-3000:]
    gpu = "CUDA self-check: exit code 0" in printed
    assert gpu or "skipped: no CUDA device visible to torch" in printed, printed[-3000:]
    shown = [o for o in notebook.cells[-1].outputs if "text/html" in o.get("data", {})]
    assert shown and "S2.2-hand" in shown[0]["data"]["text/html"], "the report is shown inline"
    assert (tmp_path / ("selfcheck-cuda.html" if gpu else "selfcheck-cpu.html")).exists()
