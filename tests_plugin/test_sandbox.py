"""Sandboxed grading (stackcheck.grading.sandbox): each limit proved on a tiny program, not a whole
grading run: the environment's allow-list, memory, CPU time, wall time, processes, the network, the
namespaces (what outlives the run, writes outside, reads of what is hidden), the copy; and a whole
grading of a submission that tries all of it, twice. Every test starts a fresh interpreter in the
sandbox, or grades in fresh processes: a limit is proved on a process of its own."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from stackcheck import cli
from stackcheck.grading import copies, grader, sandbox
from stackcheck.homework import checkpoints
from stackcheck.impl import reference
from stackcheck.paths import data

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
        "HOME",
        "TMPDIR",
        "PWD",
        "XDG_CACHE_HOME",
        "STACKCHECK_CACHE",
        "TRITON_CACHE_DIR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "LC_CTYPE",
        "TORCHINDUCTOR_CACHE_DIR",
        "JAX_COMPILATION_CACHE_DIR",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
        "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS",
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
    copy = copies.working_copy(handed_in, tmp_path / "scratch" if (tmp_path / "scratch").mkdir() is None else None)
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


def capped_by_cgroups(controller: str) -> None:
    """Skip, saying why, where the grader here gets no cgroup of ``controller`` for a worker."""
    if controller not in sandbox.cgroup_controllers():
        pytest.skip(f"no {controller} cgroup this user may make under {sandbox.CGROUPS} (an ordinary user, or none)")


def test_a_dead_judges_cgroups_are_swept_and_a_live_ones_stay():
    """A judge killed before it closed its workers' cgroups (at its time limit, or with the grader) left
    them behind, one set a grading. Each group is named after its maker: ``sweep_cgroups`` removes those
    whose maker is gone, with any process left in them, and keeps a live maker's (another grading's)."""
    capped_by_cgroups("pids")
    made = subprocess.run(
        [sys.executable, "-c", "from stackcheck.grading import sandbox; import time\n"
         "groups = sandbox._caps(sandbox.Limits(wall_s=1.0)); print(*groups, sep='\\n')"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(grader.suite_root())},
    )  # fmt: skip
    dead = [Path(line) for line in made.stdout.split()]
    live = sandbox._caps(sandbox.Limits(wall_s=1.0))
    try:
        assert dead and all(g.is_dir() for g in dead), made.stdout + made.stderr
        removed = sandbox.sweep_cgroups()
        assert set(dead) <= set(removed) and not any(g.exists() for g in dead), removed
        assert all(g.is_dir() for g in live) and not set(live) & set(removed)
    finally:
        for group in live:
            sandbox._remove(group)


def test_processes_are_capped(tmp_path):
    if os.geteuid() == 0:
        capped_by_cgroups("pids")
    code = (
        "import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
        "            time.sleep(5)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)"
    )
    done = python(code, tmp_path, processes=64)
    assert int(done.stdout) < 64, done.stdout + done.stderr


def test_a_memory_bomb_spread_over_processes_is_killed_in_its_own_cgroup(tmp_path):
    """From a determined student's attack: 14 children each touching 300 MB, each under the
    address-space limit; with no memory cgroup the host's OOM killer took the neighbour's judge. Its
    processes' memory together is the worker's cgroup's: the bomb dies there, the test that ran it too."""
    capped_by_cgroups("memory")
    code = (
        "import os\nkids = []\nfor _ in range(6):\n    pid = os.fork()\n    if pid == 0:\n"
        "        b = bytearray(200 * 1024**2)\n        for i in range(0, len(b), 4096):\n            b[i] = 1\n"
        "        os._exit(0)\n    kids.append(pid)\n"
        "codes = [os.waitpid(k, 0)[1] for k in kids]\nprint('killed', sum(os.WIFSIGNALED(c) for c in codes))"
    )
    done = python(code, tmp_path, resident_bytes=512 * 1024**2)
    alone = python(code, tmp_path, resident_bytes=4 * 1024**3)
    assert alone.stdout.strip() == "killed 0", alone.stdout + alone.stderr[-300:]
    killed = done.returncode is not None and done.returncode < 0 or not done.stdout.strip().endswith(" 0")
    assert killed, (done.returncode, done.stdout, done.stderr[-300:])


def procs(group) -> list[str]:
    return (group / "cgroup.procs").read_text().split()


def test_a_workers_threads_share_one_cpu_weight_whatever_their_number(tmp_path):
    """From a determined student's attack: 40 spinning processes starved the neighbour's judge into its
    time limit. The worker's processes are in a CPU cgroup of their own, which weighs as one process."""
    capped_by_cgroups("cpu")
    started = sandbox.start(["sleep", "30"], tmp_path, sandbox.Limits(wall_s=30), unsafe=False)
    try:
        cpu = [g for g in started.groups if g.parent.name in ("cpu", sandbox.CGROUPS.name)]
        deadline = time.monotonic() + 20  # it joins as it starts, before it becomes the command
        while time.monotonic() < deadline and not all(str(started.process.pid) in procs(g) for g in cpu):
            time.sleep(0.05)
        assert cpu and all(str(started.process.pid) in procs(g) for g in cpu), [procs(g) for g in cpu]
    finally:
        os.killpg(started.process.pid, 9)
        started.process.wait()
        started.close()


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


def test_a_grader_started_from_tmp_or_root_shows_the_run_no_real_tmp(tmp_path, monkeypatch):
    """The grader's import path is shown to the run read-only; a grader started from / or /tmp has
    that folder on it, which must not bring back the real /tmp (every submission's working copy)."""
    other = Path("/tmp") / f"stackcheck-other-copy-{uuid.uuid4().hex[:8]}.txt"
    other.write_text("another submission's copy")
    try:
        for start in ("/", "/tmp"):
            monkeypatch.setattr(sys, "path", [start, *sys.path])
            done = python(f"import os; print(os.path.exists({str(other)!r}))", tmp_path)
            monkeypatch.undo()
            assert (done.returncode, done.stdout.strip()) == (0, "False"), (start, done.stdout, done.stderr[-500:])
    finally:
        other.unlink()


# ---- issue 38's grading trial: nine part-math submissions, written as students who try would write them.
# Each attack runs when the file is imported; one that succeeds either leaves a file where the trial
# looks, or turns the file's own work wrong (_SPOIL), so its grade shows it.

HONEST = ("ana", "forker", "writer", "reader", "caller", "hog")  # correct work whose attack must fail
BORROWED = {"importer": "numpy_steps", "execer": "numpy_forward"}  # the function each borrows

# After an attack that got through: every later numpy_steps gives the wrong Y.
_SPOIL = """
def _spoil(why):
    global numpy_steps
    right = numpy_steps
    numpy_steps = lambda x, w, b: (lambda a, z, y: (a, z, y + 1))(*right(x, w, b))
"""

ATTACKS = {
    "forker": """
import os as _os, time as _time
for _i in range(100):  # a fork bomb, whose first child leaves the session; each sleeps ten minutes
    if _os.fork() == 0:
        if _i == 0:
            _os.setsid()
        _time.sleep(600)
        _os._exit(0)
""",
    "writer": """
for _path in {escapes!r}:
    try:
        open(_path, "w").write("escaped")
    except OSError:
        pass
""",
    "reader": """
import glob as _glob, sys as _sys
_secrets = {{{key!r}: "[Q1]", {other!r}: "the other student"}}  # a file: what only it holds
_found = _glob.glob("/tmp/**/*.py", recursive=True) + [a.split("=", 1)[-1] for a in _sys.argv if a.endswith(".py")]
for _path in [{hidden!r}, *_secrets, *_found]:  # the hidden test's source anywhere: its token
    try:
        _text = open(_path).read()
    except OSError:
        continue
    _mark = _secrets.get(_path)
    if _path != __file__ and ({token!r} in _text or (_mark and _mark in _text)):
        _spoil(_path)
""",
    "caller": """
import socket as _socket
try:
    _socket.create_connection(("1.1.1.1", 53), timeout=3)
    _spoil("the network")
except OSError:
    pass
""",
    "hog": """
try:
    _hog = bytearray(20 * 1024**3)
    _spoil("20 GB")
except MemoryError:
    pass
""",
    "importer": """
import importlib as _importlib
def numpy_steps(x, w, b):
    return _importlib.import_module("stackcheck.impl." + "refer" + "ence").numpy_steps(x, w, b)
""",
    "execer": """
import os as _os, stackcheck as _stackcheck
_ns = dict()
exec(open(_os.path.join(_os.path.dirname(_stackcheck.__file__), "impl", "reference.py")).read(), _ns)
numpy_forward = _ns["numpy_forward"]
""",
}

# The instructor's hidden test: its source is what the reader looks for.
# (its claim in single quotes: docs/catalogue.md's table lists the files whose tests claim in double quotes)
HIDDEN_TEST = """import numpy as np
import pytest


@pytest.mark.claim('S2.2-hand')
def test_instructor_only(impl):
    y = impl.numpy_forward(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), np.full(2, -4, np.float32))
    assert y.tolist() == [[0, 0], [0, 0]], f"hidden case {token} gave {{y}}"
"""


def trial_answers() -> str:
    """answers.toml with every checkpoint answered right (the grader's key)."""
    lines = []
    for qid, fields in checkpoints.expected_answers().items():
        lines.append(f"[{qid}]")
        lines += [f"{name} = {json.dumps(value, ensure_ascii=False)}" for name, value in fields.items()]
    return "\n".join(lines) + "\n"


def write_trial(folder: Path, hidden: Path, escapes: list[Path]) -> Path:
    """The nine submissions under ``folder``, the hidden test at ``hidden``; the writer tries each of
    ``escapes``. Returns ``folder``."""
    solution = Path(reference.__file__).read_text() + "\n\nASSIGNED = ('math',)\n" + _SPOIL
    token = uuid.uuid4().hex  # in the hidden test alone (and the reader's own text): no other file holds it
    hidden.parent.mkdir(parents=True, exist_ok=True)
    hidden.write_text(HIDDEN_TEST.format(token=token))
    folder.mkdir(parents=True)
    cli.main(["homework", "init", str(folder / "ben"), "--part", "math"])  # the untouched starter
    key = data.path(*checkpoints.KEY_FILE)
    for name in (*HONEST, *BORROWED):
        (folder / name).mkdir()
        other = folder / "ana" / "homework.py"
        spelled = {"escapes": [str(p) for p in escapes], "hidden": str(hidden), "key": str(key), "other": str(other)}
        spelled["token"] = token
        attack = ATTACKS.get(name, "").format(**spelled)
        (folder / name / "homework.py").write_text(solution + attack)
        (folder / name / "answers.toml").write_text(trial_answers())
    (folder / "ana" / "homework.py").write_text(solution + "\n# the other student's own work\n")
    return folder


@pytest.mark.grading_trial
def test_nine_submissions_that_attack_grade_as_their_work_and_the_same_twice(tmp_path):
    """Issue 38's trial (above): a correct file; the starter; a fork bomb with a
    child that leaves the session; a writer beside the submissions, into the home folder and into
    another student's folder; a reader of the hidden test's source, of the key and of another's work;
    a network client; a 20 GB allocation; a borrowing by a built module name and by exec of the
    suite's source. Graded twice at --jobs 2 with a hidden test: nothing escapes, each attack fails
    (else its work turns wrong), each borrowed function earns nothing, and the second grading's
    results.json is byte-identical to the first's, for every submission."""
    escapes = [tmp_path / "escaped.txt", Path.home() / "stackcheck-escaped.txt", tmp_path / "subs" / "ana" / "X.txt"]
    hidden = tmp_path / "instructor" / "test_hidden.py"
    folder = write_trial(tmp_path / "subs", hidden, escapes)
    results, rows, seconds = [], [], []
    for run in ("first", "second"):
        start = time.monotonic()
        out = tmp_path / run / "grades.csv"
        out.parent.mkdir()
        grade = ["grade", str(folder), "--out", str(out), "--part", "math", "--timeout", "300", "--jobs", "2"]
        assert cli.main([*grade, "--tests", str(hidden), "--visibility", "after_due_date"]) == 0
        seconds.append(round(time.monotonic() - start))
        rows.append({r["student"]: r for r in csv.DictReader(open(out))})
        feedback = tmp_path / run / "grades-feedback"
        results.append({name: (feedback / f"{name}.results.json").read_bytes() for name in rows[-1]})
    print(f"graded nine submissions twice at --jobs 2: {seconds} s")  # the first warms the compile caches
    assert [p for p in escapes if p.exists()] == [], "a write escaped the sandbox"
    first = rows[0]
    assert float(first["ana"]["percent"]) == 100.0, first["ana"]
    honest = {name: first[name]["percent"] for name in HONEST}
    assert set(honest.values()) == {first["ana"]["percent"]}, f"an attack changed a grade: {honest}"
    assert float(first["ben"]["percent"]) == 0.0, first["ben"]
    for name, borrowed in BORROWED.items():
        said = (tmp_path / "first" / "grades-feedback" / f"{name}.md").read_text()
        assert f"integrity: {borrowed} uses" in said, said[-1500:]
        assert float(first[name]["percent"]) < 100.0, first[name]
    assert results[0] == results[1], [n for n in results[0] if results[0][n] != results[1].get(n)]
    assert all(r["status"].startswith("graded (sandbox bubblewrap") for r in first.values() if r["student"] != "ben")


def test_a_submission_that_never_loads_is_stopped_at_the_wall_limit(tmp_path, monkeypatch):
    """A file that sleeps when imported: its run is stopped at --timeout, the row says so, and the
    student's feedback names no test (none had started)."""
    monkeypatch.setattr(grader, "warm_caches", lambda *args, **kwargs: None)  # the wall limit, not the compile caches
    (tmp_path / "subs" / "zed").mkdir(parents=True)
    (tmp_path / "subs" / "zed" / "homework.py").write_text("import time\nASSIGNED = ('math',)\ntime.sleep(600)\n")
    start = time.monotonic()
    assert cli.main(["grade", str(tmp_path / "subs"), "--out", str(tmp_path / "g.csv"), "--timeout", "20"]) == 0
    assert time.monotonic() - start < 60
    row = next(csv.DictReader(open(tmp_path / "g.csv")))
    assert row["status"] == "timed out (20 s)" and row["percent"] == "0", row
    assert (tmp_path / "g-feedback" / "zed.md").read_text() == "# zed\n\nscore: 0 %\n\ntimed out (20 s)\n"
    assert json.loads((tmp_path / "g-feedback" / "zed.results.json").read_text())["score"] == 0


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


def test_homework_warm_makes_the_caches_ahead_and_says_when_it_could_not(tmp_path, monkeypatch, capsys):
    """`stackcheck homework warm --part P`: grading's compile caches made at set-up, by the warm-up
    grading runs when they are missing (the trial above runs it for real); a failed one says so."""
    made = []
    monkeypatch.setattr(grader, "warm_caches", lambda setup, parts, *rest, **kw: made.append(parts) or tmp_path)
    assert cli.main(["homework", "warm", "--part", "math"]) == 0 and made == [["math"]]
    assert capsys.readouterr().out.startswith(f"stackcheck homework warm: {tmp_path}")
    monkeypatch.setattr(grader, "warm_caches", lambda *args, **kwargs: None)
    assert cli.main(["homework", "warm", "--part", "math"]) == 1 and "compile cold" in capsys.readouterr().err


# ---- issue 50: the worker has no privileges, and its copy is made safely ----------------------------


def test_the_sandbox_is_nobody_without_capabilities_or_new_privileges(tmp_path):
    status = "print([l for l in open('/proc/self/status') if l.startswith(('Uid', 'CapEff', 'NoNewPrivs'))])"
    done = python(status, tmp_path)
    lines = dict(line.split(":", 1) for line in eval(done.stdout))  # a printed list of lines
    assert lines["Uid"].split()[0] == str(sandbox.UID), lines
    assert int(lines["CapEff"], 16) == 0 and lines["NoNewPrivs"].strip() == "1", lines


def test_no_user_namespace_can_be_made(tmp_path):
    """Issue 50, item 3: not by unshare, not by a program's clone, whoever the grader is (a root grader's
    worker has no user namespace of Bubblewrap's to forbid it: a seccomp filter does)."""
    code = (
        "import ctypes, subprocess; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.unshare(0x10000000), subprocess.run(['unshare', '-U', 'true']).returncode)"
    )
    done = python(code, tmp_path)
    made = done.stdout.split()
    assert len(made) == 2 and made[0] == "-1" and made[1] != "0", done.stdout + done.stderr[-500:]


def test_no_kernel_key_can_be_added_or_read(tmp_path):
    """Issue 74: the kernel's keyrings belong to a uid, not to a sandbox: a key one worker added, the
    next worker of that uid read (another student's, a later grading's), a hidden test's inputs in it.
    add_key, keyctl and request_key fail with EPERM, whoever the grader is."""
    code = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); calls = {'x86_64': (248, 250, 249), "
        "'aarch64': (217, 219, 218)}[os.uname().machine]; "
        "add = libc.syscall(calls[0], b'user', b'stackcheck-probe', b'x', 1, -4); e1 = ctypes.get_errno(); "
        "read = libc.syscall(calls[1], 0, -4, 0); e2 = ctypes.get_errno(); "
        "ask = libc.syscall(calls[2], b'user', b'stackcheck-probe', None, 0); e3 = ctypes.get_errno(); "
        "print(add, e1, read, e2, ask, e3)"
    )
    done = python(code, tmp_path)
    made = done.stdout.split()
    assert made == ["-1", "1", "-1", "1", "-1", "1"], done.stdout + done.stderr[-500:]


def test_two_slots_workers_are_two_uids_whose_processes_do_not_count_together(tmp_path):
    """From a determined student's attack: graded at once as one uid, a worker's 4092 threads left its
    neighbour's none (the kernel counts a uid's processes host-wide: RLIMIT_NPROC), and an honest
    grade fell to 68 %. Each grading slot's worker is a uid of its own: while slot 0's worker holds
    all it may start, slot 1's starts its threads."""
    if os.geteuid() != 0:
        pytest.skip("the grader is no root here: each worker is this user in a user namespace of its own")
    limits = sandbox.Limits(wall_s=60, processes=48)
    hog = "import threading, time\n" + "\n".join(
        [
            "made = 0",
            "try:",
            "    while True:",
            "        threading.Thread(target=time.sleep, args=(20,), daemon=True).start(); made += 1",
            "except RuntimeError:",
            "    pass",
            "open('held', 'w').write(str(made)); time.sleep(20)",
        ]
    )
    busy = tmp_path / "slot0"
    busy.mkdir()
    held = sandbox.start(
        [sys.executable, "-c", hog], busy, limits, sandbox.Jail(uid=sandbox.worker_uid(0)), stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not (busy / "held").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (busy / "held").exists() and int((busy / "held").read_text()) > 20
        other = tmp_path / "slot1"
        other.mkdir()
        code = (
            "import threading, time\nfor _ in range(8):\n    threading.Thread(target=time.sleep, args=(1,)).start()\n"
        )
        code += "print('started')"
        done = python(code, other, sandbox.Jail(uid=sandbox.worker_uid(1)), processes=48)
        assert "started" in done.stdout, done.stdout + done.stderr[-500:]
    finally:
        os.killpg(held.process.pid, signal.SIGKILL)
        held.process.wait()
        held.close()


def test_under_a_root_grader_the_worker_is_an_unprivileged_host_user(tmp_path):
    """Issue 74, item 2: a file only root may read, within what the worker is shown, stays closed, and a
    file it writes is not root's (uid 65534 in a user namespace would be root on the host)."""
    if os.geteuid() != 0:
        pytest.skip("the grader is no root here: its worker is this user in a user namespace")
    shown = tmp_path / "shown"
    shown.mkdir()
    (shown / "root-only.txt").write_text("SECRET")
    (shown / "root-only.txt").chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    code = f"open('made.txt', 'w').write('x'); print(open({str(shown / 'root-only.txt')!r}).read())"
    done = python(code, work, sandbox.Jail(readable=(shown,)))
    assert "SECRET" not in done.stdout and "Permission denied" in done.stderr, done.stdout + done.stderr[-500:]
    assert (work / "made.txt").stat().st_uid == sandbox.UID


def test_no_mount_umount_or_new_namespace_uncovers_what_is_hidden(tmp_path):
    """The covering folders stay: umount and a bind remount fail, and so do they inside a user and mount
    namespace of the worker's own, where it has every capability (an ordinary grader's worker cannot
    make one; a root grader's can, and the covers come into it locked). The hidden folder lies within
    one the worker is shown, as a checkout's .git does: covered, not absent."""
    tmp_path.chmod(0o755)  # shown as a checkout is: readable by all
    secret = tmp_path / "hidden" / "key.toml"
    secret.parent.mkdir()
    secret.write_text("the key")
    code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
hidden = {str(secret.parent).encode()!r}
def tries(stage):
    return {{
        f"umount {{stage}}": libc.umount2(hidden, 2),
        f"remount {{stage}}": libc.mount(b"none", b"/", None, 32 | 4096 | 1 << 14, None),
    }}
done = tries("in the sandbox")
if libc.unshare(0x10000000 | 0x00020000) == 0:
    done.update(tries("in its own namespaces"))
print(sorted(k for k, v in done.items() if v == 0), os.listdir(hidden))
"""
    done = python(
        code,
        tmp_path / "work" if (tmp_path / "work").mkdir() is None else None,
        sandbox.Jail(readable=(tmp_path,), hidden=(secret.parent,)),
    )
    assert done.stdout.strip() == "[] []", done.stdout + done.stderr[-500:]


def test_tmp_and_every_file_are_sized(tmp_path):
    """/tmp is memory the address-space limit does not count: it has a size; any file has a size limit."""
    code = (
        "import os\nfor path, size in (('/tmp/big', {tmp}), ('own.bin', {file})):\n"
        "    try:\n        with open(path, 'wb') as f:\n            f.write(bytes(size))\n"
        "        print('wrote', path)\n"
        "    except OSError as e:\n        print('refused', path, e.errno)\n"
    ).format(tmp=sandbox.TMP_BYTES + 1024**2, file=sandbox.FILE_BYTES + 1024**2)
    done = python(code, tmp_path)
    assert "wrote" not in done.stdout and done.stdout.count("refused") == 2, done.stdout + done.stderr[-500:]


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_the_memory_folders_hold_no_more_than_their_size(tmp_path, folder):
    """/tmp and /dev/shm are memory: files each under the file-size limit fill them only up to TMP_BYTES."""
    chunk = sandbox.FILE_BYTES - 1024**2
    code = (
        f"import os\nwritten = 0\nfor n in range({sandbox.TMP_BYTES // chunk + 2}):\n"
        f"    try:\n        with open('{folder}/f%d' % n, 'wb') as f:\n            f.write(bytes({chunk}))\n"
        f"        written += {chunk}\n    except OSError:\n        break\nprint(written)\n"
    )
    done = python(code, tmp_path)
    assert done.returncode == 0 and 0 < int(done.stdout) <= sandbox.TMP_BYTES, done.stdout + done.stderr[-500:]


def test_no_host_socket_is_reachable(tmp_path, short_tmp):
    """A unix socket of the grader's (a file under /tmp, /run or the home; an abstract one) cannot be reached."""
    import socket

    servers, paths = [], [short_tmp / "grader.sock"]
    if os.access("/run", os.W_OK):
        paths.append(Path("/run") / f"stackcheck-{uuid.uuid4().hex[:8]}.sock")
    try:
        for path in paths:
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
            server.listen()
            servers.append(server)
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind(b"\0stackcheck-" + uuid.uuid4().hex[:8].encode())
        abstract.listen()
        servers.append(abstract)
        names = [str(p) for p in paths] + [abstract.getsockname()]
        code = (
            f"import socket\nfor name in {names!r}:\n    s = socket.socket(socket.AF_UNIX)\n"
            "    try:\n        s.connect(name)\n        print('reached', name)\n    except OSError:\n        pass\n"
        )
        done = python(code, tmp_path / "work" if (tmp_path / "work").mkdir() is None else None)
        assert done.returncode == 0 and "reached" not in done.stdout, done.stdout + done.stderr[-500:]
    finally:
        for server in servers:
            server.close()
        for path in paths:
            path.unlink(missing_ok=True)


def test_a_scratch_folder_outside_tmp_stays_hidden(tmp_path):
    """With TMPDIR elsewhere (a scratch root not under /tmp), what the grader hides is still hidden."""
    scratch = Path(tempfile.mkdtemp(prefix=".stackcheck-scratch-", dir=Path.home()))
    try:
        (scratch / "other-copy.py").write_text("another student's work")
        work = scratch / "work"
        work.mkdir()
        done = python(
            f"import os; print(os.path.exists({str(scratch / 'other-copy.py')!r}))",
            work,
            sandbox.Jail(hidden=(scratch,), inside=sandbox.INSIDE),
        )
        assert done.stdout.strip() == "False", done.stdout + done.stderr[-500:]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("kind", ["link", "dangling link", "fifo", "too big", "linked folder"])
def test_the_copy_takes_regular_files_only(tmp_path, kind):
    handed_in = tmp_path / "zoe"
    handed_in.mkdir()
    (handed_in / "homework.py").write_text("x = 1\n")
    odd = handed_in / "answers.toml"
    if kind == "link":
        odd.symlink_to(data.path(*checkpoints.KEY_FILE))
    elif kind == "dangling link":
        odd.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        os.mkfifo(odd)
    elif kind == "too big":
        odd.write_bytes(bytes(copies.COPY_BYTES + 1))
    else:
        (handed_in / "more").symlink_to(tmp_path)
    with pytest.raises(copies.Refused) as refused:
        copies.working_copy(handed_in, tmp_path / "scratch")
    assert ("answers.toml" in str(refused.value) or "more" in str(refused.value)) or kind == "too big", refused.value


def test_the_copy_copies_regular_files(tmp_path):
    handed_in = tmp_path / "zoe"
    (handed_in / "sub").mkdir(parents=True)
    (handed_in / "homework.py").write_text("x = 1\n")
    (handed_in / "sub" / "notes.txt").write_text("mine")
    copy = copies.working_copy(handed_in, tmp_path / "scratch")
    assert (copy / "homework.py").read_text() == "x = 1\n" and (copy / "sub" / "notes.txt").read_text() == "mine"


def test_another_copy_of_the_suite_on_the_judges_path_is_hidden(tmp_path):
    """A judge whose import path names a second copy of the suite (its --rootdir's conftest, a
    PYTHONPATH: a checkout graded from while another is installed) protects its own copy's key and
    solutions; the other copy's are as secret. A worker can read no file of that copy, so a
    submission that would hand back wrong values after reading its key earns its honest score."""
    # beside the checkout: a place no jail covers (/tmp is the worker's own, homes and /var/tmp are covered)
    other = Path(tempfile.mkdtemp(prefix=".other-copy-", dir=data.ROOT))
    try:
        (other / "stackcheck" / "paths").mkdir(parents=True)
        (other / "stackcheck" / "paths" / "data.py").write_text("")
        (other / "fixtures").mkdir()
        key = other / "fixtures" / "checkpoint_key.toml"
        key.write_text("[Q1]\nsecret = 1\n")
        (other / "on_path").mkdir()
        homework = tmp_path / "hw"
        homework.mkdir()
        solution = Path(reference.__file__).read_text() + "\n\nASSIGNED = ('math',)\n"
        spoil = f"\ntry:\n    open({str(key)!r}).read()\n    numpy_steps = lambda x, w, b: (x[:, :0],) * 3\n"
        spoil += "except OSError:\n    pass\n"
        (homework / "homework.py").write_text(solution + spoil)
        report = tmp_path / "report.json"
        command = [
            sys.executable,
            "-m",
            "pytest",
            f"--homework={homework}",
            "--homework-graded",
            "-p",
            "no:cacheprovider",
        ]
        command += [f"--curriculum-report={report}", "-m", "cpu", "tests_math/test_s2_2_hand.py"]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(other / "on_path"), os.environ.get("PYTHONPATH")])),
        }
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=data.ROOT, env=env)
        tests = [t for claim in json.loads(report.read_text())["claims"] for t in claim.get("tests", [])]
        assert tests and {t["outcome"] for t in tests} == {"passed"}, done.stdout[-3000:]
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_an_ordinary_users_grading_runs_one_submission_at_a_time(monkeypatch, capsys):
    """From a determined student's attack: graded by an ordinary user at --jobs 2, both slots' workers
    were that user's host uid, and one holding 4,000 threads left its neighbour none (60 % for 100 %
    work); nothing divides that uid's memory or CPU either. Such a grading runs one at a time and says
    why; a root grader whose workers get cgroups of their own runs them side by side."""
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert grader._side_by_side(2, unsafe=False) == 1
    assert "one submission at a time: an ordinary user's workers are one host uid" in capsys.readouterr().out
    monkeypatch.undo()
    isolated, _ = sandbox.slots_isolated()
    assert grader._side_by_side(2, unsafe=False) == (2 if isolated else 1)
    assert grader._side_by_side(1, unsafe=False) == 1 and grader._side_by_side(3, unsafe=True) == 3


def test_a_submission_fills_its_own_area_never_the_graders_disk(tmp_path, monkeypatch):
    """From a determined student's attack: its copy was a folder of the grader's disk; it filled the
    disk while its neighbour ran, and the neighbour's judge failed (ENOSPC: 0 % for 100 % work). Where
    the grader is root, a submission's writable places are a tmpfs of their own, sized: it fills that."""
    if not copies.areas_sized():
        pytest.skip("the grader here may not mount a tmpfs (an ordinary user grades one submission at a time)")
    monkeypatch.setattr(copies, "AREA_BYTES", 64 * 1024**2)
    area = copies.area(tmp_path / "area" / "ana")
    try:
        before = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
        code = (
            "import os\nn = 0\ntry:\n    while n < 40:\n        open(f'f{n}', 'wb').write(bytes(8 * 1024**2))\n"
            "        n += 1\nexcept OSError as error:\n    print('full after', n, error.errno)"
        )
        done = sandbox.run([sys.executable, "-c", code], area, sandbox.Limits(wall_s=30))
        after = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
        assert done.stdout.startswith("full after") and done.stdout.split()[-1] == "28", done.stdout + done.stderr
        assert before - after < 32 * 1024**2, f"the grader's disk lost {(before - after) / 1024**2:.0f} MB"
    finally:
        copies.remove_area(area)
    assert not area.exists()


@pytest.mark.parametrize("mark", sandbox.ENVIRONMENT_MARKS)
def test_a_venv_inside_the_checkout_adds_no_covers(tmp_path, mark):
    """A newcomer's venv inside the clone holds some 1,600 __pycache__ folders: covered one by one,
    bwrap refused the worker ("Exceeded maximum number of arguments 9000") and every graded run had
    no score. An environment's folder holds libraries, never the course's bytecode: it adds none."""
    root = tmp_path / "stackcheck"
    (root / "tests_math" / "__pycache__").mkdir(parents=True)
    (root / ".git").mkdir()
    env = root / ".venv"
    for i in range(50):
        (env / "lib" / f"p{i}" / "__pycache__").mkdir(parents=True)
    (env / mark).mkdir() if mark == "conda-meta" else (env / mark).write_text("home = /usr\n")
    assert sorted(sandbox.covered(root)) == [root / ".git", root / "tests_math" / "__pycache__"]
