"""No test depends on where the clone lives: the suite's path-sensitive self-tests (a foreign project
sees nothing, the rerun lines, the README's set-up) pass from a copy of this checkout in a folder
named `stackcheck`, under a path with a space, with a virtual environment inside it, as a learner's
`git clone … stackcheck && cd stackcheck && python -m venv .venv` makes (under `with space/`), whether
the environment that runs them sits inside the clone, outside it (`~/venvs/x`), or is a user install."""

import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from stackcheck.paths import data

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


def outer_site_dirs() -> list[str]:
    """This interpreter's site folders in its import order: its user site (a `pip install --user`),
    its venv's and its base's site-packages; a venv outside the clone (`~/venvs/x`) holds the
    editable install's import hook in one of them."""
    found = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    return sorted(
        {p for p in found if Path(p).is_dir()}, key=lambda p: sys.path.index(p) if p in sys.path else len(sys.path)
    )


def nested_venv(where: Path, site_dirs: list[str]) -> Path:
    """A venv at ``where`` that sees ``site_dirs`` as site folders (site.addsitedir: their .pth files
    run, the editable install's import hook among them), also where this interpreter is a venv itself
    (--system-site-packages then reaches the base Python's, which has no pytest: the H200 image)."""
    venv.create(where, system_site_packages=True, with_pip=False)
    python = where / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True
    )
    lines = [f"import site; site.addsitedir({folder!r})" for folder in site_dirs]
    (Path(inner.stdout.strip()) / "outer.pth").write_text("\n".join(lines) + "\n")
    return python


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
    python = nested_venv(tmp_path / "nested", [str(outer)])
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
    python = nested_venv(clone / ".venv", outer_site_dirs())
    done = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", *PATH_SENSITIVE],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(PATH_SENSITIVE) + 4} passed" in done.stdout, done.stdout[-2000:]  # test_inert.py holds 5
