"""Sandboxed grading (stackcheck.homework.sandbox): each limit proved on a tiny program, not a whole
grading run: the environment's allow-list, memory, CPU time, wall time, processes, the network, the
namespaces (what outlives the run, writes outside, reads of what is hidden), the copy; and a whole
grading of a submission that tries all of it, twice."""

import csv
import os
import sys
import time
from pathlib import Path

import pytest

from stackcheck import cli
from stackcheck.homework import sandbox
from stackcheck.impl import reference

pytestmark = [pytest.mark.meta, pytest.mark.usefixtures("bubblewrap")]


def python(code: str, tmp_path, jail=None, **limits) -> sandbox.Outcome:
    return sandbox.run([sys.executable, "-c", code], tmp_path, sandbox.Limits(**{"wall_s": 30, **limits}), jail)


def test_the_graders_secrets_stay_out(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "hunter2")
    done = python("import os; print(sorted(os.environ))", tmp_path)
    assert done.returncode == 0, done.stderr
    seen = eval(done.stdout)  # a printed list of names
    assert "GRADER_SECRET" not in seen and set(seen) <= {
        *sandbox.ENV_ALLOWED,
        "TMPDIR",
        "PWD",
        "XDG_CACHE_HOME",
        "STACKCHECK_CACHE",
        "TRITON_CACHE_DIR",
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


def test_the_network_is_cut(tmp_path):
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


# forks a child that leaves the session and sleeps on, then returns: the run must not wait for it
OUTLIVES = (
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n"
    "    os._exit(0)\nprint('returned')"
)


def test_a_process_that_leaves_the_session_dies_with_the_run(tmp_path):
    start = time.monotonic()
    done = python(OUTLIVES, tmp_path, wall_s=20)
    assert done.stdout.strip() == "returned" and time.monotonic() - start < 15, (done, time.monotonic() - start)


def test_the_wall_limit_ends_every_process_of_the_run(tmp_path):
    start = time.monotonic()
    done = python(OUTLIVES.replace("print('returned')", "time.sleep(60)"), tmp_path, wall_s=2)
    assert done.returncode is None and time.monotonic() - start < 15, time.monotonic() - start


def test_processes_are_capped(tmp_path):
    if os.geteuid() == 0 and sandbox._process_cap(1) is None:
        pytest.skip("as root, with no writable pids cgroup (/sys/fs/cgroup/pids), nothing caps processes")
    code = (
        "import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
        "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)"
    )
    done = python(code, tmp_path, processes=64)
    assert int(done.stdout) < 64, done.stdout + done.stderr


def attempts(paths: dict[str, Path], read: Path) -> str:
    """A program that writes each of ``paths`` and reads ``read``, printing what it managed."""
    return (
        f"paths, read = { ({k: str(v) for k, v in paths.items()})!r}, {str(read)!r}\n"
        "for name, path in paths.items():\n"
        "    try:\n        open(path, 'w').write('x')\n        print('wrote', name)\n"
        "    except OSError:\n        pass\n"
        "try:\n    print('read', open(read).read())\nexcept OSError:\n    pass\n"
    )


def test_it_writes_only_its_copy_and_sees_nothing_hidden(tmp_path):
    submissions = tmp_path / "submissions"
    (submissions / "bob").mkdir(parents=True)
    (submissions / "bob" / "homework.py").write_text("the other student's work")
    work = tmp_path / "work"
    work.mkdir()
    outside = {
        "beside the submissions": tmp_path / "escaped.txt",
        "into another submission": submissions / "bob" / "TAMPERED.txt",
        "into the home folder": Path.home() / "stackcheck-escaped.txt",
        "into its own copy": work / "mine.txt",
    }
    jail = sandbox.Jail(hidden=(submissions,))
    done = python(attempts(outside, submissions / "bob" / "homework.py"), work, jail)
    assert done.returncode == 0, done.stderr[-1000:]
    assert "read" not in done.stdout, done.stdout
    # a write under /tmp lands in the run's private /tmp, gone with it
    assert [name for name, path in outside.items() if path.exists()] == ["into its own copy"], done.stdout


ATTACKS = """

import os as _os, time as _time

def _attack():  # at import: a child that leaves the session, writes outside, a read of another's work
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            _time.sleep(600)
        _os._exit(0)
    for _path in {paths!r}:
        try:
            open(_path, "w").write("escaped")
        except OSError:
            pass
    try:
        open("stolen.txt", "w").write(open({other!r}).read())
    except OSError:
        pass

_attack()
ASSIGNED = ("math",)
"""


def test_a_submission_that_attacks_grades_as_its_work_and_the_same_twice(tmp_path):
    """Issue 38: a correct submission that, when imported, starts a process that leaves the session and
    sleeps ten minutes, writes beside the submissions, into the home folder and into another student's
    folder, and copies that student's file: graded twice, nothing escapes, the other student's grade
    is theirs, and the attacker's two results.json are byte-identical (the tests whose subprocesses
    its sleeper holds cost it the same points each time)."""
    submissions = tmp_path / "submissions"
    (submissions / "bob").mkdir(parents=True)
    (submissions / "bob" / "homework.py").write_text("ASSIGNED = ('math',)\n")
    escapes = [tmp_path / "escaped.txt", Path.home() / "stackcheck-escaped.txt", submissions / "bob" / "TAMPERED.txt"]
    attack = ATTACKS.format(paths=[str(p) for p in escapes], other=str(submissions / "bob" / "homework.py"))
    (submissions / "eve").mkdir()
    (submissions / "eve" / "homework.py").write_text(Path(reference.__file__).read_text() + attack)
    results, rows = [], []
    for run in ("first", "second"):
        start = time.monotonic()
        out = tmp_path / run / "grades.csv"
        out.parent.mkdir()
        grade = ["grade", str(submissions), "--out", str(out), "--part", "math", "--timeout", "300", "--jobs", "2"]
        assert cli.main(grade) == 0
        assert time.monotonic() - start < 240, f"the {run} grading took {time.monotonic() - start:.0f} s"
        rows.append({r["student"]: r for r in csv.DictReader(open(out))})
        results.append((tmp_path / run / "grades-feedback" / "eve.results.json").read_bytes())
    assert [p for p in escapes if p.exists()] == [], "a write escaped the sandbox"
    assert not (submissions / "eve" / "stolen.txt").exists()
    assert [float(r["bob"]["percent"]) for r in rows] == [0, 0], "the other student's grade is their own"
    assert rows[0]["eve"]["percent"] == rows[1]["eve"]["percent"], [r["eve"] for r in rows]
    assert results[0] == results[1], "a second grading must give the same results.json"


def test_grading_refuses_without_a_sandbox_unless_told(tmp_path, monkeypatch, capsys):
    """No Bubblewrap: `stackcheck grade` says so in one line with the fix; --unsafe-no-sandbox runs
    with the limits alone and says so in the outcome."""
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: (None, "no bwrap command: " + sandbox.INSTALL_HINT))
    (tmp_path / "subs" / "ana").mkdir(parents=True)
    (tmp_path / "subs" / "ana" / "homework.py").write_text("ASSIGNED = ('math',)\n")
    assert cli.main(["grade", str(tmp_path / "subs"), "--out", str(tmp_path / "grades.csv")]) == 2
    said = capsys.readouterr().err
    assert said.startswith("stackcheck: no sandbox available: no bwrap command: install bubblewrap"), said
    assert "--unsafe-no-sandbox" in said and not (tmp_path / "grades.csv").exists()
    with pytest.raises(sandbox.NoSandbox):
        python("print(1)", tmp_path)
    unsafe = sandbox.run([sys.executable, "-c", "print(1)"], tmp_path, sandbox.Limits(wall_s=30), unsafe=True)
    assert unsafe.stdout.strip() == "1" and unsafe.sandbox == "none (unsafe)"
