"""CI's check of the temp folder (.ci/temp_left.py): nothing may be left but the caches meant to stay,
and what is left is named with what it holds, so its maker can be told from the CI log alone."""

import runpy
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def left(monkeypatch, capsys):
    """``python3 .ci/temp_left.py FOLDER "the self-tests"``, as .ci/run calls it (run here, in this
    process): its exit code and what it printed."""

    def run(folder):
        monkeypatch.setattr("sys.argv", ["temp_left.py", str(folder), "the self-tests"])
        with pytest.raises(SystemExit) as exit:
            runpy.run_path(str(ROOT / ".ci" / "temp_left.py"), run_name="__main__")
        return exit.value.code, capsys.readouterr().err

    return run


def test_the_caches_meant_to_stay_and_unlocked_pytest_folders_pass(tmp_path, left):
    (tmp_path / "torchinductor_someone" / "fxgraph").mkdir(parents=True)
    (tmp_path / ".modular_1000").mkdir()
    (tmp_path / "pytest-of-someone" / "pytest-3").mkdir(parents=True)
    assert left(tmp_path) == (0, "")


def test_a_left_folder_is_named_with_the_files_it_holds(tmp_path, left):
    cache = tmp_path / "tmpfqfzv24b"
    for name in ("fxgraph/ab/entry", "triton/0/kernel.json", "aotautograd/x", "locks/1", "locks/2", "locks/3"):
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_text("x")
    locked = tmp_path / "pytest-of-someone" / "pytest-4"
    locked.mkdir(parents=True)
    (locked / ".lock").write_text("")
    (tmp_path / "stray.txt").write_text("x")
    rc, said = left(tmp_path)
    assert rc == 1, said
    lines = said.splitlines()
    assert len(lines) == 3, said
    assert f"left {cache} in its temp folder (6 file(s): aotautograd/x, fxgraph/ab/entry, locks/1" in said
    assert "and 1 more)" in said and "triton/0/kernel.json" not in said
    assert f"left {locked} in its temp folder (1 file(s): .lock)" in said
    assert f"left {tmp_path / 'stray.txt'} in its temp folder (a file)" in said
