"""A graded submission's worker is a ``python -I`` given its judge's import path
(stackcheck.grading.worker.imports): it imports as the judge does, a user install's packages
(``pip install --user``) too, whose site folder's .pth files -I would leave unprocessed. Each test
starts a fresh Python, as the judge starts its worker: -I, and a user site folder of its own, cannot be
had in this process."""

import site
import subprocess
import sys

import pytest

from stackcheck.grading import worker

pytestmark = pytest.mark.meta


def imported(code: str) -> str:
    """What ``code`` prints in ``python -I -S``: -S leaves it nothing but the code's own imports to find
    the probe with."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


@pytest.fixture
def user_site(tmp_path):
    """A user site folder whose .pth file alone leads to the module ``only_through_a_pth``."""
    folder, elsewhere = tmp_path / "user-site", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "only_through_a_pth.py").write_text("FOUND = 'found'\n")
    (folder / "probe.pth").write_text(f"{elsewhere}\n")
    return str(folder)


PROBE = "import only_through_a_pth; print(only_through_a_pth.FOUND)"


def test_the_worker_processes_the_user_site_folder_its_judge_processed(user_site, monkeypatch):
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: user_site)
    monkeypatch.setattr(sys, "path", [*sys.path, user_site])  # as the judge's site processed it
    assert imported(worker.imports([user_site]) + PROBE) == "found"


def test_a_folder_the_judge_did_not_process_stays_a_plain_path_entry(user_site, monkeypatch):
    """In a venv (no user site) a folder on the judge's path is only a path entry, as it is for the judge."""
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    monkeypatch.setattr(site, "getusersitepackages", lambda: user_site)
    assert "No module named 'only_through_a_pth'" in imported(worker.imports([user_site]) + PROBE)
