"""No test depends on where the clone lives: the suite's path-sensitive self-tests (a foreign project
sees nothing, the rerun lines, the README's set-up) pass from a copy of this checkout in a folder
named `stackcheck`, under a path with a space, with a virtual environment inside it, as a learner's
`git clone … stackcheck && cd stackcheck && python -m venv .venv` makes (under `with space/`), whether
the environment that runs them sits inside the clone, outside it (`~/venvs/x`), or is a user install."""

import shutil
import subprocess
from pathlib import Path

import pytest

from stackcheck.paths import data, venvs

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
PATH_SENSITIVE = [
    "tests_plugin/test_inert.py",
    "tests_plugin/test_numerics_policy.py::test_a_failing_claim_test_points_to_the_course_once_with_a_rerun_line",
    "tests_plugin/test_numerics_policy.py::test_the_rerun_line_works_for_pyargs_runs_from_another_folder",
    "tests_plugin/test_readme.py::test_the_set_up_is_what_ci_runs",
]


def checkout_files() -> list[Path]:
    """The checkout's files as a clone has them."""
    found = data.checkout_files(ROOT)
    if found is None:
        pytest.skip("not a git checkout: nothing to clone from")
    return found


def test_a_nested_venv_runs_the_outer_site_folders_import_hooks(tmp_path):
    """Issue 55: with the venv outside the clone, the editable install's import hook is a .pth file in
    that venv's site-packages; listed as a plain path, that folder's .pth files never ran and the
    nested venv could not import stackcheck. A fresh interpreter of the nested venv: how a new Python's site
    module processes its folders is what is judged, and this process did that at its own start."""
    outer, hooked = tmp_path / "outer-site-packages", tmp_path / "hooked"
    outer.mkdir()
    hooked.mkdir()
    (hooked / "hooked_probe.py").write_text("NAME = 'found'\n")
    (outer / "__editable__.probe.pth").write_text(f"{hooked}\n")
    python = venvs.derived(tmp_path / "nested", [str(outer)])
    done = subprocess.run(
        [str(python), "-c", "import hooked_probe; print(hooked_probe.NAME)"], capture_output=True, text=True
    )
    assert done.stdout.strip() == "found", done.stderr[-2000:]


def test_the_path_sensitive_tests_pass_from_a_folder_named_stackcheck_with_a_space_and_a_venv(tmp_path):
    """Fresh interpreters of a venv inside a copied clone: the paths are what is judged, and a process's own
    paths are fixed when it starts."""
    clone = tmp_path / "with space" / "stackcheck"
    for path in checkout_files():
        copy = clone / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
    python = venvs.derived(clone / ".venv")
    done = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", *PATH_SENSITIVE],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(PATH_SENSITIVE) + 4} passed" in done.stdout, done.stdout[-2000:]  # test_inert.py holds 5
