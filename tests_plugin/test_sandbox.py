"""Sandboxed grading (stackcheck.homework.sandbox): each limit proved on a tiny program, not a whole
grading run: the environment's allow-list, memory, CPU time, wall time, the network, the copy."""

import sys

import pytest

from stackcheck.homework import sandbox

pytestmark = pytest.mark.meta


def python(code: str, tmp_path, **limits) -> sandbox.Outcome:
    return sandbox.run([sys.executable, "-c", code], tmp_path, sandbox.Limits(**{"wall_s": 30, **limits}))


def test_the_graders_secrets_stay_out(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "hunter2")
    done = python("import os; print(sorted(os.environ))", tmp_path)
    assert done.returncode == 0, done.stderr
    seen = eval(done.stdout)  # a printed list of names
    assert "GRADER_SECRET" not in seen and set(seen) <= {
        *sandbox.ENV_ALLOWED,
        "TMPDIR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "LC_CTYPE",
    }


def test_memory_is_limited(tmp_path):
    done = python("x = bytearray(4 * 1024**3)", tmp_path, memory_bytes=1024**3)
    assert done.returncode != 0 and "MemoryError" in done.stderr, done.stderr[-500:]


def test_cpu_time_is_limited(tmp_path):
    done = python("while True:\n    pass", tmp_path, cpu_s=1)
    assert done.returncode is not None and done.returncode < 0, (done.returncode, done.stderr[-300:])


def test_wall_time_is_limited(tmp_path):
    done = python("import time; time.sleep(60)", tmp_path, wall_s=1)
    assert done.returncode is None


def test_the_network_is_cut_where_the_os_allows(tmp_path):
    prefix, how = sandbox.network_isolation()
    if how != "isolated":
        pytest.skip(f"network isolation unavailable here: {how}")
    code = (
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n    print('reached')\n"
        "except OSError as e:\n    print('cut', e)"
    )
    done = python(code, tmp_path)
    assert done.stdout.startswith("cut"), done.stdout + done.stderr


def test_grading_works_on_a_copy(tmp_path):
    handed_in = tmp_path / "ana"
    handed_in.mkdir()
    (handed_in / "homework.py").write_text("x = 1\n")
    copy = sandbox.working_copy(handed_in, tmp_path / "scratch" if (tmp_path / "scratch").mkdir() is None else None)
    done = python("open('written.txt', 'w').write('x')", copy)
    assert done.returncode == 0 and (copy / "written.txt").exists() and not (handed_in / "written.txt").exists()
