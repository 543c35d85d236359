"""No test depends on where the clone lives: the suite's path-sensitive self-tests (a foreign project
sees nothing, the rerun lines, the README's set-up) pass from a copy of this checkout in a folder
named `stackcheck`, under a path with a space, with a virtual environment inside it, as a learner's
`git clone … stackcheck && cd stackcheck && python -m venv .venv` makes (under `with space/`)."""

import shutil
import site
import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
PATH_SENSITIVE = [
    "tests_plugin/test_inert.py",
    "tests_plugin/test_numerics_policy.py::test_a_failing_claim_test_points_to_the_course_once_with_a_rerun_line",
    "tests_plugin/test_numerics_policy.py::test_the_rerun_line_works_for_pyargs_runs_from_another_folder",
    "tests_plugin/test_readme.py::test_the_set_up_is_what_ci_runs",
]


def checkout_files() -> list[str]:
    """The checkout's files as a clone has them: tracked, and new ones git does not ignore."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone from")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return [name for name in listed if (ROOT / name).is_file()]


def test_the_path_sensitive_tests_pass_from_a_folder_named_stackcheck_with_a_space_and_a_venv(tmp_path):
    clone = tmp_path / "with space" / "stackcheck"
    for name in checkout_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    venv.create(clone / ".venv", system_site_packages=True, with_pip=False)
    python = clone / ".venv" / "bin" / "python"
    # this interpreter's packages, also where it is a venv itself (--system-site-packages then
    # reaches the base Python's, which has no pytest: the H200 image)
    inner = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True
    )
    (Path(inner.stdout.strip()) / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    done = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", *PATH_SENSITIVE],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(PATH_SENSITIVE) + 4} passed" in done.stdout, done.stdout[-2000:]  # test_inert.py holds 5
