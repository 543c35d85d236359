"""Issue 50's attack corpus (tests_plugin/grading_attacks/: data, never collected): part-math submissions that
attack ``stackcheck grade``, each honest work (or a stub, wrong work, borrowed work) plus one attack,
described by its attack.toml. Built here (the solutions are never shipped: the honest work is the reference's
source, as the grading trial of test_sandbox.py builds it; what git cannot hold, FIFOs, symlinks, devices, bad
bytes, is made from the manifest), graded at --jobs 2 with a hidden test as root and again as an ordinary
user, and judged: each attack earns what its work earns, no file outside its copy changes, nothing hidden
reaches any feedback, grades.csv lists every submission in fixed columns, and the re-grade is byte-identical.
Attacks by class are generated too (issue 74 item 9, at the end of this file): Hypothesis builds batches of
random names, secrets planted at random places of the host and an attacker that changes its copy at random,
each graded end to end and judged the same way. Each grading runs the grader in a fresh process, as an
instructor's command does: its sandboxed workers and another user's interpreter are the separation under test,
which no in-process run has."""

from __future__ import annotations

import csv
import fcntl
import fnmatch
import hashlib
import json
import marshal
import os
import py_compile
import re
import shutil
import site
import socket
import stat
import subprocess
import sys
import tarfile
import threading
import time
import tomllib
import uuid
from importlib.util import cache_from_source
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from stackcheck.claims import catalogue
from stackcheck.grading import grader, names
from stackcheck.homework import assignment, checkpoints
from stackcheck.impl import reference
from stackcheck.paths import data
from stackcheck.stacks.available import Missing

pytestmark = [pytest.mark.meta, pytest.mark.usefixtures("bubblewrap")]

CORPUS = Path(__file__).parent / "grading_attacks"
NOBODY = 65534  # the ordinary user the second grading runs as, where the test runs as root
TIMEOUT_S = 120  # --timeout per submission: the sleeper costs one job this long
# what the corpus is graded on (stackcheck grade -k): the §2.2 hand example, §2.1's shapes (random
# sizes), §2.3's broadcast (a view, eager ops, XLA's HLO), the operand checks and the hidden test:
# every stack of part math, in seconds
SELECT = "test_s2_2_hand or test_s2_1_shapes or test_s2_3_broadcast or test_bad_input or test_instructor_only"
KEY_WORDS = "removes this file from the copy students get"  # fixtures/checkpoint_key.toml's comment
FILE_CAP = 13 * 1024**3 // 4  # the grader's own file-size limit (above the sparse file's 3 GiB)
FEEDBACK_CAP = 2 * 1024**2  # a feedback file larger than this quotes what the submission printed uncapped

HONEST = Path(reference.__file__).read_text(encoding="utf-8") + "\n\nASSIGNED = ('math',)\n"
WORK = {  # what each manifest's work is, before its attack
    "honest": HONEST,
    "borrowed": HONEST,  # the attack borrows one function over it
    "hardcoded": HONEST,  # the attack hard-codes two functions over it
    "wrong": HONEST,  # made wrong by WRONG, after the prelude
    "stub": assignment.stub_source(["math"]),
    "borrowed-all": assignment.stub_source(["math"]),  # the attack borrows every function over it
}
# What every built homework.py holds between its work and its attack: where things are on this
# machine, and what a successful attack does, turning the work wrong (the grade shows it) and saying
# what it found (the feedback shows it, where the grader quotes a failure).
PRELUDE = '''

# ---- written by tests_plugin/test_grading_attacks.py: where things are on this machine
_PLACES = {places!r}


def _secret(text):
    """Whether ``text`` is the key or holds what this run planted (the hidden test's token, a marker), told by
    fingerprint: the words an attack might look for (``instructor_only``, ``[Q5]``) are in the suite's own
    public files too, which a clone under /tmp or an installed copy puts within its reach."""
    import hashlib
    import re

    words = set(re.findall(r"MARKER-[A-Za-z0-9_-]+|[0-9a-f]{{32}}", text))
    words.add(text)
    return any(hashlib.sha256(w.encode(errors="replace")).hexdigest() in _PLACES["fingerprints"] for w in words)


def _spoil(found):
    """An attack got through: the work turns wrong, and says what it found."""
    global numpy_steps, numpy_forward
    note = "got through: " + repr(found)[:3000]

    def numpy_steps(x, w, b):
        raise AssertionError(note)

    def numpy_forward(x, w, b):
        raise AssertionError(note)

'''
WRONG = """
_right_steps = numpy_steps


def numpy_steps(x, w, b):
    a, z, y = _right_steps(x, w, b)
    return a, z, y + 1


def numpy_forward(x, w, b):
    return _right_steps(x, w, b)[2] + 1

"""
# The instructor's hidden test (the grading trial's, with the marker the attacks look for: its name). Its token
# is in its source and compiled constants alone, never in a message: a feedback that shows it read the file.
# Its failure message names its inputs (``{inputs}``, a marker): no feedback may show it either.
HIDDEN_TEST = """import numpy as np
import pytest

TOKEN = "{token}"


@pytest.mark.claim('S2.2-hand')
def test_instructor_only(impl):
    y = impl.numpy_forward(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), np.full(2, -4, np.float32))
    assert y.tolist() == [[0, 0], [0, 0]], f"hidden case gave {{y}} for its inputs {inputs}"
"""


def manifests() -> dict[str, dict]:
    return {f.name: tomllib.loads((f / "attack.toml").read_text()) for f in sorted(CORPUS.iterdir()) if f.is_dir()}


def right_answers() -> str:
    """answers.toml with every checkpoint answered as the key says (built here: the key is not shipped)."""
    return checkpoints.answers_file(checkpoints.expected_answers())


def handed_in(name: str, spec: dict) -> str:
    """The folder name an attack is handed in under: ``handed_in``, the bytes of ``handed_in_hex`` (what git
    should not hold: a 254-byte name, CP949), else its corpus folder's."""
    if "handed_in_hex" in spec:
        return os.fsdecode(bytes.fromhex(spec["handed_in_hex"]))
    return spec.get("handed_in", name)


def build(folder: Path, places: dict, markers: dict[str, str]) -> dict[str, dict]:
    """The corpus under ``folder``, its files and what git cannot hold made from each manifest."""
    made = manifests()
    for name, spec in made.items():
        target = folder / handed_in(name, spec)
        shutil.copytree(CORPUS / name, target, ignore=shutil.ignore_patterns("attack.toml", "__pycache__"))
        attack = (target / "homework.py").read_text() if (target / "homework.py").exists() else None
        if spec["work"] != "other's":
            prelude = PRELUDE.format(places={**places, "me": str(target)})
            marker = f"# {markers[name]}\n" if name in markers else ""
            work = WORK[spec["work"]] + prelude + (WRONG if spec["work"] == "wrong" else "")
            (target / "homework.py").write_text(marker + work + (attack or ""))
        answers = {"key": right_answers(), "template": checkpoints.template()}.get(spec["answers"])
        if answers is not None:
            (target / "answers.toml").write_text(answers + (f"# {markers[name]}\n" if name in markers else ""))
        for thing in spec.get("make", []):
            make(target / thing["path"], thing, places)
    return made


def make(path: Path, thing: dict, places: dict) -> None:
    kind = thing["kind"]
    if kind == "symlink":
        path.unlink(missing_ok=True)
        path.symlink_to(thing["to"].format(**places))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
        except OSError:  # no mknod here: the same device, through a link
            path.symlink_to("/dev/zero")
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(thing["bytes"])
    elif kind == "expression":
        with open(path, "a") as f:
            f.write("\n_TERMS = " + " + ".join(["1"] * thing["terms"]) + "\n")
    elif kind == "bytes":
        with open(path, "ab") as f:
            f.write(bytes.fromhex(thing["hex"]))
    else:
        raise ValueError(f"{path}: unknown kind {kind!r} in attack.toml")


def snapshot(*roots: Path) -> dict[str, object]:
    """Every entry under ``roots`` (never following links, never opening a FIFO or a device): its content's
    hash, its link target, or its kind; a file over 64 MB by size and mtime."""
    seen = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        paths = [root] if not root.is_dir() or root.is_symlink() else []
        for here, dirs, files in os.walk(root) if not paths else ():
            paths += [Path(here, n) for n in (*dirs, *files)]
        for path in paths:
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                seen[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode) and info.st_size > 64 * 1024**2:
                seen[str(path)] = ("big", info.st_size, info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode):
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                seen[str(path)] = ("kind", stat.S_IFMT(info.st_mode))
    return seen


class Listeners:
    """A TCP listener on the host's 127.0.0.1, unix sockets under /run and /tmp/.X11-unix and an abstract
    one: what the network attacks try to reach; ``reached`` records every connection."""

    def __init__(self, spare: Path):
        self.reached: list[str] = []
        self.sockets: list[socket.socket] = []
        self.files: list[Path] = []
        tag = uuid.uuid4().hex[:10]
        tcp = self._listen(socket.AF_INET, ("127.0.0.1", 0))
        self.tcp = list(tcp.getsockname())
        self.unix = []
        x11 = Path("/tmp/.X11-unix")
        for path in (Path("/run") / f"stackcheck-attack-{tag}.sock", x11 / f"X{int(tag[:4], 16) % 900 + 100}"):
            try:
                if path.parent == x11 and not x11.exists():
                    x11.mkdir()
                    x11.chmod(0o1777)
                    self.files.append(x11)
                self._listen(socket.AF_UNIX, str(path))
            except OSError:
                path = spare / f"stackcheck-attack-{tag}.sock"
                self._listen(socket.AF_UNIX, str(path))
            os.chmod(path, 0o777)
            self.files.insert(0, path)
            self.unix.append(str(path))
        self.abstract = f"stackcheck-attack-{tag}"
        self._listen(socket.AF_UNIX, "\0" + self.abstract)

    def _listen(self, family, address) -> socket.socket:
        server = socket.socket(family, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(16)
        self.sockets.append(server)
        threading.Thread(target=self._accept, args=(server, address), daemon=True).start()
        return server

    def _accept(self, server, address) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.reached.append(repr(address))
            connection.close()

    def close(self) -> None:
        for server in self.sockets:
            server.close()
        for path in self.files:
            (shutil.rmtree if path.is_dir() else Path.unlink)(path)


def as_nobody(home: Path) -> tuple[list[str], str]:
    """(the command prefix that runs the grader as uid NOBODY, "") where the test runs as root and that user can
    run this Python and import the suite and its stacks; else ([], why not)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return [], "no setpriv command (util-linux) to drop to an ordinary user"
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = "import stackcheck, numpy, torch, jax, pytest; print('ok')"
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=grader_env(home)
        )
    except (OSError, subprocess.SubprocessError) as error:
        return [], f"setpriv failed: {error}"
    if done.stdout.strip() != "ok":
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return (
            [],
            f"uid {NOBODY} cannot run {sys.executable} with the suite ({why}): install Python where all may read it",
        )
    return prefix, ""


def grader_env(home: Path, tmpdir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "STACKCHECK_"))}
    paths = [str(grader.suite_root()), *filter(None, [env.get("PYTHONPATH")])]
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join(paths))
    if data.user_site() is not None:  # a user install: its packages, not HOME's
        env["PYTHONUSERBASE"] = site.getuserbase()
    env.pop("XDG_CACHE_HOME", None)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return env


def grade(prefix: list[str], env: dict, subs: Path, out: Path, hidden: Path) -> tuple[float, str]:
    # a grader that follows a link to /dev/zero stops at this file size, not a full disk
    capped = [shutil.which("prlimit"), f"--fsize={FILE_CAP}", "--"] if shutil.which("prlimit") else []
    command = [*capped, *prefix, sys.executable, "-m", "stackcheck.cli", "grade", str(subs), "--out", str(out)]
    command += ["--part", "math", "--jobs", "2", "--timeout", str(TIMEOUT_S), "--tests", str(hidden), "-k", SELECT]
    start = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, errors="replace", env=env, cwd=out.parent, timeout=5400
    )
    said = f"exit code {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return time.monotonic() - start, said


def fingerprints(planted: list[str]) -> list[str]:
    """What the attacks' ``_secret`` knows a secret by: the sha256 of each thing a grading plants, of the key
    and of the key as git's HEAD holds it."""
    key = data.path(*checkpoints.KEY_FILE)
    texts = [*planted, key.read_text(encoding="utf-8") if key.is_file() else None, git_key()]
    return sorted({hashlib.sha256(t.encode()).hexdigest() for t in texts if t})


def git_key() -> str | None:
    """The key as the checkout's HEAD holds it (what ``git show`` would give a reader), None outside git."""
    done = subprocess.run(
        ["git", "-C", str(grader.suite_root()), "show", f"HEAD:{'/'.join(checkpoints.KEY_FILE)}"],
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else None


def secrets(token: str, markers: dict[str, str], places: dict) -> dict[str, str]:
    """What no feedback may hold: {text: whose it is} (a student's own marker is theirs to see)."""
    found = {token: "the hidden test's token", "stackcheck-grade-": "the grader's scratch folder"}
    found[places["tmpdir"]] = "the grader's TMPDIR"
    found.update({m: f"{name}'s marker" for name, m in markers.items()})
    # the key's answers are among each question's public choices: its own words are what only it holds
    found[KEY_WORDS] = "the checkpoint key"
    return found


def judge(
    name: str, spec: dict, rows: dict, feedback: Path, secret: dict[str, str], markers: dict[str, str], stem: str
) -> list[str]:
    """What went wrong for one submission in one grading (empty: held). Its feedback files are ``stem``'s:
    its Gradescope file must give its own row's score, its instructor-only record must be one."""
    row = rows.get(name)
    if row is None:
        return ["no row in grades.csv"]
    problems = []
    try:
        percent = float(row["percent"])
    except (KeyError, ValueError):
        return [f"percent {row.get('percent')!r}"]
    control = spec.get("control", "wrong")
    honest, wrong, controlled = (
        float(rows[n]["percent"]) if n in rows else float("nan") for n in ("carl", "wrong", control)
    )
    expected = spec["earns"]
    ok = {
        "honest": percent == honest,
        "zero": percent == 0,
        "below honest": percent < honest and (percent > 0 or not spec.get("more_than_zero")),
        "honest or zero": percent in (honest, 0.0),
        "as wrong": percent == wrong,
        "as control": percent == controlled,
    }[expected]
    if not ok:
        problems.append(f"earned {percent:g} %, not {expected} ({honest:g} %)")
    if not row.get("status"):
        problems.append("no status in its row")
    problems += own_files(feedback, stem, percent)
    for path in sorted(feedback.glob(f"{stem}.*")):
        if path.name.endswith(".instructor-only.json") or path.name.split(".")[0] != stem:
            continue
        if path.stat().st_size > FEEDBACK_CAP:
            problems.append(f"{path.name} is {path.stat().st_size // 1024} KiB")
        text = path.read_text(errors="replace")
        shown = sorted({what for s, what in secret.items() if s in text and markers.get(name) != s})
        if shown:
            problems.append(f"{path.name} shows {', '.join(shown)}")
    return problems


def own_files(feedback: Path, stem: str, percent: float) -> list[str]:
    """Whether the Gradescope file of ``stem`` says its row's ``percent`` and its instructor-only record (where
    there is one) is a list of withheld tests: another name's files written over them would not."""
    problems = []
    try:
        results = json.loads((feedback / f"{stem}.results.json").read_text(encoding="utf-8"))
        said = 100 * results["score"] / results["max_score"] if results["max_score"] else 0.0
        if abs(said - percent) > 0.1:
            problems.append(f"{stem}.results.json says {said:g} %, its row {percent:g} %")
    except (OSError, ValueError, KeyError, TypeError) as error:
        problems.append(f"{stem}.results.json is not its Gradescope file ({type(error).__name__}: {error})")
    kept = feedback / f"{stem}.instructor-only.json"
    try:
        if kept.exists() and not isinstance(json.loads(kept.read_text(encoding="utf-8")), list):
            problems.append(f"{kept.name} is not a list of withheld tests")
    except ValueError:
        problems.append(f"{kept.name} is not JSON")
    return problems


def csv_problems(out: Path, names: list[str]) -> list[str]:
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    header, body = table[0], table[1:]
    problems = []
    ids = set(catalogue.catalogue()) | {"FORGED-claim", "x\r\nana,0,0,0,forged"}
    if len(set(header)) != len(header) or set(header) & ids:
        problems.append(f"columns not fixed: {sorted(set(header) & ids)[:5]} among {len(header)} columns")
    students = [r[header.index("student")] if len(r) == len(header) else r for r in body]
    if sorted(map(str, students)) != sorted(names):
        odd = sorted(set(map(str, students)) ^ set(names))
        problems.append(f"{len(students)} rows for {len(names)} submissions: {odd}")
    formulas = [c for r in body for c in r if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    if formulas:
        problems.append(f"cells a spreadsheet would run: {formulas[:3]}")
    return problems


@pytest.mark.grading_trial
def test_every_attack_of_the_corpus_earns_what_its_work_earns_as_root_and_as_an_ordinary_user(tmp_path, request):
    """Issue 50's "Done when": the corpus graded by an ordinary user where the test runs as root (else by the
    test's user, said in the table; a failure under ``--require ordinary-user``), then again as root, of the
    attacks whose outcome the grader's uid can change (those without ``any_uid``, and the controls): every
    attack earns what its work earns, nothing outside its copy changes, nothing hidden reaches feedback, every
    submission has a row in fixed columns, the honest grade is 100 % and the re-grade byte-identical. Prints
    attack -> percent -> status."""
    if not CORPUS.is_dir():
        pytest.skip(f"the attack corpus ({CORPUS.name}/) ships in the checkout only: run this from a clone")
    tag = uuid.uuid4().hex
    # Everything the gradings read or write but the kept results lives here, outside /tmp (the grader's TMPDIR
    # among it), where the ordinary user may read it: pytest's own tmp_path is its owner's alone.
    base = Path("/var/tmp") / f"stackcheck-attacks-{tag[:12]}"
    tmpdir, user_home, out_dir = base / "tmp", base / "nobody-home", base / "out"
    homes = [Path.home(), user_home]
    home_markers = {h / f"stackcheck-attack-marker-{tag[:8]}.txt": f"MARKER-home-{uuid.uuid4().hex}" for h in homes}
    base.mkdir(mode=0o755)
    for folder in (tmpdir, user_home, out_dir):
        folder.mkdir()
    tmpdir.chmod(0o1777)
    listeners = Listeners(tmpdir)
    try:
        for path, text in home_markers.items():
            path.write_text(text)
        required = "ordinary-user" in (request.config.getoption("require", None) or [])
        graded = grade_corpus(base, tmp_path, listeners, home_markers, tag, required)
    finally:
        listeners.close()
        shutil.rmtree(base, ignore_errors=True)
        for path in home_markers:
            path.unlink(missing_ok=True)
        for root in (Path.home(), grader.suite_root() / "fixtures", data.cache_dir()):
            for stray in root.rglob("ESCAPED-*") if root.is_dir() else ():
                stray.unlink()
    table, lines = verdicts(graded, listeners)
    print("\n".join(lines))
    honest = graded["runs"]["first"]["rows"].get("carl", {}).get("percent")
    assert honest is not None and float(honest) == 100.0, f"the honest control earned {honest} %"
    assert not any(table.values()) and len(lines) == len(table) + 3, "\n".join(lines)


def grade_corpus(
    base: Path, kept: Path, listeners: Listeners, home_markers: dict[Path, str], tag: str, required: bool
) -> dict:
    """Build the corpus under ``base``, grade it twice (keeping each grading's output under ``kept``) and
    watch what changes outside the copies. The second grading is an ordinary user's where the test runs as
    root; where none can run this Python, root's again (``required``: Missing, before any grading)."""
    tmpdir, user_home, out_dir = base / "tmp", base / "nobody-home", base / "out"
    subs, out, hidden = base / "subs", out_dir / "grades.csv", base / "instructor" / "test_hidden.py"
    key = data.path(*checkpoints.KEY_FILE)
    token = uuid.uuid4().hex  # in the hidden test alone
    inputs = f"MARKER-hidden-inputs-{uuid.uuid4().hex}"  # in its failure message
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN_TEST.format(token=token, inputs=inputs))
    py_compile.compile(str(hidden), cfile=cache_from_source(str(hidden)))  # as the instructor's own run leaves it
    out.write_text(f"student,percent\nMARKER-previous-{tag},100\n")  # a previous run's grades.csv
    places = {
        "hidden": str(hidden),
        "hidden_dir": str(hidden.parent),
        "key": str(key),
        "checkout": str(grader.suite_root()),
        "submissions": str(subs),
        "victim": str(subs / "ana"),
        "out": str(out),
        "tmpdir": str(tmpdir),
        "caches": [str(data.cache_dir()), str(user_home / ".cache" / "stackcheck")],
        "homes": [str(h.parent) for h in home_markers],
        "markers": [str(p) for p in home_markers],
        "tcp": listeners.tcp,
        "unix": listeners.unix,
        "abstract": listeners.abstract,
    }
    markers = {"ana": f"MARKER-ana-{uuid.uuid4().hex}"}
    places["fingerprints"] = fingerprints([token, inputs, *markers.values(), *home_markers.values()])
    subs.mkdir()
    specs = build(subs, places, markers)
    assert len(specs) >= 30 and {"ana", "carl", "ben", "wrong"} <= set(specs)
    secret = secrets(token, markers, places)
    secret[inputs] = "the hidden test's inputs"
    secret.update({m: "a home folder's marker" for m in home_markers.values()})
    secret[f"MARKER-previous-{tag}"] = "the previous grades.csv"
    for path in (base, *base.rglob("*")):  # the ordinary user reads it all, and writes its home and out/
        if path.is_symlink():
            continue
        if path.is_relative_to(out_dir) or path.is_relative_to(user_home):
            if os.geteuid() == 0:
                os.chown(path, NOBODY, NOBODY)
        elif not stat.S_ISFIFO(path.stat().st_mode) and not stat.S_ISCHR(path.stat().st_mode):
            path.chmod(path.stat().st_mode | 0o004 | (0o001 if path.is_dir() else 0))
    watched = (subs, hidden.parent, grader.suite_root() / "fixtures", *home_markers)
    before = snapshot(*watched)
    head = git_head()
    if os.geteuid() != 0:
        nobody, why_not = [], f"the test runs as uid {os.geteuid()}: both gradings are this ordinary user's"
    else:
        nobody, why_not = as_nobody(user_home)
        if not nobody and required:
            raise Missing(why_not, "ordinary-user")
    runs, changed = {}, set()
    # the ordinary user's grading of all; then root's of what the grader's uid can change (not any_uid)
    for run, prefix in (("first", nobody), ("second", [])):
        graded = set(specs) if run == "first" else {n for n, spec in specs.items() if "any_uid" not in spec}
        if run == "second":
            aside = base / "graded-once"
            aside.mkdir(exist_ok=True)
            for name in set(specs) - graded:
                os.rename(subs / handed_in(name, specs[name]), aside / handed_in(name, specs[name]))
            before = snapshot(*watched)
        for path in (out_dir, *out_dir.rglob("*")) if os.geteuid() == 0 else ():
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        env = grader_env(user_home if prefix else Path.home(), tmpdir)
        previous = out.stat().st_mtime_ns
        seconds, said = grade(prefix, env, subs, out, hidden)
        shutil.copytree(out_dir, kept / run)
        (kept / run / "grades-feedback").mkdir(exist_ok=True)
        rows = {}
        shown = {names.cell(names.display(handed_in(n, spec))): n for n, spec in specs.items()}
        if out.stat().st_mtime_ns != previous:  # else the grading wrote no grades.csv: the batch stopped
            with open(kept / run / out.name, newline="", encoding="utf-8") as f:
                rows = {shown[r["student"]]: r for r in csv.DictReader(f) if r.get("student") in shown}
        left = sorted(str(p) for p in tmpdir.iterdir() if str(p) not in listeners.unix)
        runs[run] = {"seconds": seconds, "said": said, "rows": rows, "dir": kept / run, "left": left, "graded": graded}
        after = snapshot(*watched)
        changed |= {p for p in {*before, *after} if before.get(p) != after.get(p)}
    changed = sorted(changed)
    roots = (base, *(p.parent for p in home_markers), grader.suite_root() / "fixtures", *map(Path, places["caches"]))
    escaped = sorted(str(p) for root in roots if root.is_dir() for p in root.rglob("ESCAPED-*"))
    return {
        "specs": specs,
        "runs": runs,
        "changed": changed + escaped,
        "moved": head != git_head(),
        "why_not": why_not,
        "secret": secret,
        "markers": markers,
    }


def git_head() -> str:
    done = subprocess.run(["git", "-C", str(grader.suite_root()), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()


def verdicts(graded: dict, listeners: Listeners) -> tuple[dict[str, list[str]], list[str]]:
    """({attack: what went wrong}, the table's lines: attack -> percent -> status, then what no attack owns).
    An attack is judged in each grading that graded it; one graded twice must earn the same, its files
    byte-identical."""
    specs, runs = graded["specs"], graded["runs"]
    first, second = runs["first"], runs["second"]
    handed = {name: handed_in(name, spec) for name, spec in specs.items()}
    stems = names.stems(list(handed.values()))
    table = {}
    for name, spec in specs.items():
        problems = []
        stem = stems[handed[name]]
        for run, done in runs.items():
            if name not in done["graded"]:
                continue
            feedback = done["dir"] / "grades-feedback"
            found = judge(name, spec, done["rows"], feedback, graded["secret"], graded["markers"], stem)
            if name == "carl" and done["rows"]:
                cells = sorted(names.cell(names.display(handed[n])) for n in done["graded"])
                found += csv_problems(done["dir"] / "grades.csv", cells) + [f"left {p}" for p in done["left"]]
            problems += [f"{run}: {p}" for p in found]
        if name in second["graded"]:
            results = [done["dir"] / "grades-feedback" / f"{stem}.results.json" for done in (first, second)]
            if not all(p.exists() for p in results) or results[0].read_bytes() != results[1].read_bytes():
                problems.append("results.json missing or different on re-grade")
            if first["rows"].get(name) != second["rows"].get(name):
                problems.append("its grades.csv row different on re-grade")
        problems += [f"changed {p}" for p in graded["changed"] if owned_by(p, handed[name])]
        table[name] = problems
    others = [p for p in graded["changed"] if not any(owned_by(p, h) for h in handed.values())]
    lines = [f"{'attack':<20} {'row':<18} {'expects':<14} {'1st %':>6} {'2nd %':>6}  status"]
    for name, spec in specs.items():
        percents = [done["rows"].get(name, {}).get("percent", "-") for done in (first, second)]
        percents[1] = percents[1] if name in second["graded"] else "once"
        status = "held" if not table[name] else "GOT THROUGH: " + "; ".join(table[name])
        lines.append(f"{name:<20} {spec['row']:<18} {spec['earns']:<14} {percents[0]:>6} {percents[1]:>6}  {status}")
    timings = ", ".join(
        f"{run} {done['seconds']:.0f} s ({len(done['graded'])} submissions)" for run, done in runs.items()
    )
    lines.append(f"gradings at --jobs 2: {timings}")
    why_not = graded["why_not"]
    lines.append(
        f"first grading by the second's user: {why_not}"
        if why_not
        else f"first grading: uid {NOBODY}; second: root, of the attacks the grader's uid can change (no any_uid)"
    )
    lines += [f"{run}: no grades.csv: {done['said'][-600:]}" for run, done in runs.items() if not done["rows"]]
    lines += [f"changed outside any copy, no attack's: {p}" for p in others]
    lines += [f"network reached: {r}" for r in listeners.reached]
    lines += ["the checkout's HEAD moved"] if graded["moved"] else []
    return table, lines


def owned_by(path: str, name: str) -> bool:
    """Whether a changed ``path`` is the doing or damage of the submission handed in as ``name``: its
    folder, or a file named for its attack."""
    return f"/subs/{name}/" in path or Path(path).name.startswith(f"ESCAPED-{name}")


def test_an_attack_knows_each_planted_secret_and_no_public_file_for_one():
    """The attacks' detector (``_secret``, in every built homework.py): each secret a grading plants (the
    hidden test's token, in its source and its compiled constants; a marker; the key) is one, and no other
    file of the checkout is: a detector that took public words for a secret turned honest work wrong
    wherever the checkout came within a submission's reach (a clone under /tmp)."""
    token, marker = uuid.uuid4().hex, f"MARKER-ana-{uuid.uuid4().hex}"
    inputs = f"MARKER-hidden-inputs-{uuid.uuid4().hex}"
    code = PRELUDE.format(places={"fingerprints": fingerprints([token, inputs, marker])})
    found: dict = {}
    exec(compile(code, "<prelude>", "exec"), found)
    secret = found["_secret"]
    hidden = HIDDEN_TEST.format(token=token, inputs=inputs)
    compiled = marshal.dumps(compile(hidden, "test_hidden.py", "exec"))
    key = data.path(*checkpoints.KEY_FILE)
    assert secret(hidden) and any(secret(s.decode()) for s in re.findall(rb"[ -~]{8,}", compiled))
    assert secret(f"# {marker}\n") and secret(f"hidden case gave [[1]] for its inputs {inputs}")
    assert secret(key.read_text(encoding="utf-8"))
    other = HIDDEN_TEST.format(token=uuid.uuid4().hex, inputs=f"MARKER-hidden-inputs-{uuid.uuid4().hex}")
    assert not secret(other) and not secret(f"# MARKER-ana-{uuid.uuid4().hex}")
    public = data.checkout_files(grader.suite_root()) or list(CORPUS.parent.glob("*.py"))
    flagged = [str(p) for p in public if p != key and secret(p.read_text(encoding="utf-8", errors="replace"))]
    assert not flagged, f"public files a detector takes for a secret: {flagged[:10]}"


# ---- attacks by class, generated ------------------------------------------------------------------
# Hypothesis builds batches of submissions, each graded end to end like the corpus above: folder names
# of any bytes (up to 255, CP949, ``=2+3``, names of another student's outputs, case twins), secrets
# planted at random places of the host (files of random modes, a folder, a unix socket that sends its
# marker, a second copy of the key and of the reference), an attacker whose code, at import, in a graded
# function or at exit, links its own copy to the secrets and its neighbour, makes FIFOs, deep chains,
# closed folders and files up to 50 MB, and reads every secret and quotes what it read, a cheap folder
# for each class of name (refused, unparsable or a stub), and one honest neighbour. Judged: no secret in
# any output, the attacker read nothing, the neighbour earns what it earns graded alone, one row per
# folder, nothing outside the copies changed, the grader exits 0.

LIKELY = st.sampled_from(["carl", "Carl", "=2+3", "+1", "김철수", os.fsdecode("김철수".encode("cp949")), "a\u2028b"])


def host_places() -> list[Path]:
    """Writable folders of this host outside all a worker is shown, a second clone's place beside ours."""
    found = [Path.home(), Path("/root"), Path("/home"), Path("/var/tmp"), Path("/opt"), Path("/run"), Path("/")]
    return [p for p in dict.fromkeys([*found, Path("/etc"), data.ROOT.parent]) if p.is_dir() and os.access(p, os.W_OK)]


EXAMPLES = 2  # batches a test grades: each a real grading, ~30 s on 2 cores
FOUND = Path("/tmp/gen-found")  # where a batch that got through is kept, to reproduce
BIG = 50 * 1024**2  # the largest file an attack writes
MODES = (0o600, 0o644, 0o400, 0o000, 0o666)
SAME_SCORE = ("percent", "earned", "claims", "checkpoints")  # of an honest row, in any batch or alone
NAME_MAX = 255
GENERATED = settings(
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example costs a grading
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

# ---- the batches ----------------------------------------------------------------------------------


def fits(name: str) -> bool:
    raw = os.fsencode(name)
    return 0 < len(raw) <= NAME_MAX and b"/" not in raw and b"\0" not in raw and not name.startswith(".")


def twins(name: str) -> list[str]:
    """Names that would write ``name``'s outputs, or look like them: its feedback's suffixes, its case twin, its
    stem spelled out, itself padded to 255 bytes."""
    made = [f"{name}.results", f"{name}.instructor-only", name.swapcase(), f"{name}.json", names.stems([name])[name]]
    made.append(name + "x" * (NAME_MAX - len(os.fsencode(name))))
    return [n for n in dict.fromkeys(made) if n != name and fits(n)]


def as_name(raw: bytes) -> str:
    """Any bytes as a folder's name: '/' and NUL (which no name holds) and a leading '.' (a folder the grader
    passes over) made '_'."""
    raw = raw.replace(b"/", b"_").replace(b"\0", b"_")
    return os.fsdecode(b"_" + raw[1:] if raw.startswith(b".") else raw)


any_name = st.one_of(LIKELY.filter(fits), st.binary(min_size=1, max_size=NAME_MAX).map(as_name))
long_name = st.binary(min_size=NAME_MAX - 15, max_size=NAME_MAX).map(as_name)
cp949_name = st.text(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), min_size=1, max_size=60).map(
    lambda text: os.fsdecode(text.encode("cp949"))  # Hangul as a Korean Windows zip holds it, unpacked on Linux
)
formula_name = st.sampled_from(["=2+3", "+1", "-1", "@SUM(A1)", '=HYPERLINK("http://x")', "=cmd|' -C calc'!A0"])
in_copy = st.one_of(
    st.sampled_from(["answers.toml", "homework.py", "notes/answers.toml", "__pycache__/homework.cpython-311.pyc"]),
    st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=12).filter(fits),
)
# a host path by what it is: ("secret", i) the i-th planted secret; else the neighbour's folder or a file of it,
# the key, the hidden test, grades.csv
target = st.one_of(
    st.tuples(st.just("secret"), st.integers(0, 99)),
    st.sampled_from([("neighbour", ""), ("neighbour", "answers.toml"), ("key", ""), ("hidden", ""), ("out", "")]),
)
# each class of change to its own copy, as (kind, path in the copy, what): every batch makes one of each
acts_by_class = [
    st.tuples(st.just("link"), in_copy, target),  # then writes through it
    # (not at homework.py: the worker's own traceback would wait on it, a timeout that quotes nothing)
    st.tuples(st.just("fifo"), in_copy.filter(lambda p: p != "homework.py"), st.none()),
    st.tuples(st.just("deep"), st.just(""), st.integers(1, 3000)),  # folders, a FIFO, a link and a closed folder
    st.tuples(st.just("big"), in_copy, st.tuples(st.integers(0, BIG), st.booleans())),  # (bytes, sparse)
    st.tuples(st.just("closed"), in_copy, st.none()),  # a folder no one may enter
    st.tuples(st.just("write"), in_copy, st.none()),  # what it read, as a file
]
when = st.sampled_from(["import", "call", "exit"])
place = st.integers(0, 99)  # where on the host, of the places a secret may be planted
secret = st.tuples(place, st.sampled_from(["file", "folder", "socket", "key", "reference"]))
extra = st.sampled_from(["link to a secret", "link to the neighbour", "fifo", "unparsable", "stub"])


@st.composite
def batches(draw) -> dict:
    """A batch to grade: names, secrets and the attacker's acts, as data (its repr reproduces it)."""
    neighbour = draw(any_name)
    twin = st.one_of(st.sampled_from(twins(neighbour) or ["carl"]), any_name)
    attacker = draw(twin.filter(lambda n: n != neighbour))
    taken, extras = {os.fsencode(neighbour), os.fsencode(attacker)}, []
    for names_of in (twin, long_name, cp949_name, formula_name, any_name):  # a cheap folder of each class of name
        name = draw(names_of.filter(lambda n: os.fsencode(n) not in taken))
        taken.add(os.fsencode(name))
        extras.append((name, draw(extra)))
    # one secret of each kind that must be there (a 0600 file, a socket, the key's and the reference's copies)
    planted = [(draw(place), "file", 0o600)]
    planted += [(draw(place), kind, draw(st.sampled_from(MODES))) for kind in ("socket", "key", "reference")]
    planted += [(where, kind, draw(st.sampled_from(MODES))) for where, kind in draw(st.lists(secret, max_size=3))]
    acts = [(draw(when), draw(made)) for made in acts_by_class]
    acts = draw(st.permutations(acts + draw(st.lists(st.tuples(when, st.one_of(acts_by_class)), max_size=4))))
    return {"neighbour": neighbour, "attacker": attacker, "extras": extras, "secrets": planted, "acts": acts}


# ---- what the attacker runs in its worker ---------------------------------------------------------

ATTACK = '''

# ---- written by tests_plugin/test_grading_generated.py: a generated attack
_ATTACK = {attack!r}
_DONE = set()


def _read():
    """Every planted secret, the neighbour's files, the key, the hidden test and each link this copy holds:
    what reading (or connecting) gave."""
    import os
    import socket
    import stat

    here = os.path.dirname(os.path.abspath(__file__))
    links = [os.path.join(here, a[2]) for a in _ATTACK["acts"] if a[1] == "link"]
    found = {{}}
    for path in list(_ATTACK["reads"]) + [p for p in links if os.path.islink(p)]:
        try:
            kind = os.stat(path).st_mode
            if stat.S_ISSOCK(kind):
                with socket.socket(socket.AF_UNIX) as s:
                    s.settimeout(5)
                    s.connect(path)
                    found[path] = s.recv(4096).decode(errors="replace")
            elif stat.S_ISDIR(kind):
                for name in sorted(os.listdir(path))[:20]:
                    with open(os.path.join(path, name), errors="replace") as f:
                        found[os.path.join(path, name)] = f.read(2000)
            elif stat.S_ISREG(kind):
                with open(path, errors="replace") as f:
                    found[path] = f.read(2000)
        except Exception:
            pass
    return found


def _act(when):
    """This phase's changes to the worker's own copy (each once), then a read of everything: printed."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    for number, (phase, kind, path, arg) in enumerate(_ATTACK["acts"]):
        if phase != when or number in _DONE:
            continue
        _DONE.add(number)
        path = os.path.join(here, path or f"d{{number}}")
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
                os.unlink(path)  # a file, a link or a FIFO (opened, it would wait for ever)
            if kind == "link":
                os.symlink(arg, path)
                with open(path, "a") as f:
                    f.write(_ATTACK["written"])
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "big":
                with open(path, "wb") as f:
                    if arg[1]:
                        f.truncate(arg[0])
                    for start in range(0, 0 if arg[1] else arg[0], 1 << 20):
                        f.write(bytes(min(1 << 20, arg[0] - start)))
            elif kind == "closed":
                os.makedirs(path)
                with open(os.path.join(path, "inside"), "w") as f:
                    f.write(_ATTACK["written"])
                os.chmod(path, 0)
            elif kind == "write":
                with open(path, "w") as f:
                    f.write(repr(_read()))
            elif kind == "deep":
                fd = os.open(here, os.O_RDONLY)
                try:
                    os.mkdir(path, dir_fd=fd)
                    for _ in range(arg):
                        below = os.open(path, os.O_RDONLY, dir_fd=fd)
                        os.close(fd)
                        fd, path = below, "d"
                        os.mkdir(path, dir_fd=fd)
                    os.mkfifo("pipe", dir_fd=fd)
                    os.symlink(_ATTACK["reads"][0], "secret", dir_fd=fd)
                    os.mkdir("closed", mode=0, dir_fd=fd)
                finally:
                    os.close(fd)
        except Exception:
            pass
    found = _read()
    for stream in (sys.stdout, sys.stderr):
        print(_ATTACK["canary"], when, found, file=stream, flush=True)
    return found


_AT_IMPORT = _act("import")
__import__("atexit").register(_act, "exit")


def numpy_forward(x, w, b):
    """Quoted by the feedback where a test fails (its first line, 300 characters): the markers and tokens it read
    at import and now, first, then where it read anything."""
    import re

    found = {{**_AT_IMPORT, **_act("call")}}
    tokens = dict.fromkeys(re.findall(r"MARKER-[A-Za-z0-9_-]+|[0-9a-f]{{32}}", " ".join(found.values())))
    raise AssertionError(f"{{_ATTACK['canary']}} found {{' '.join(tokens) or 'nothing'}} in {{sorted(found)}}")


numpy_steps = numpy_forward
'''


# ---- one grading's folders ------------------------------------------------------------------------


class Layout:
    """A grading's folders under /var/tmp (where an ordinary user may read them: pytest's tmp_path is its owner's
    alone): the submissions, the instructor's hidden test, grades.csv's folder, the grader's TMPDIR and the
    ordinary user's home."""

    def __init__(self, tag: str):
        self.base = Path("/var/tmp") / f"stackcheck-gen-{tag[:12]}"
        self.subs, self.out_dir, self.tmpdir = self.base / "subs", self.base / "out", self.base / "tmp"
        self.home, self.hidden = self.base / "home", self.base / "instructor" / "test_hidden.py"
        self.out = self.out_dir / "grades.csv"
        self.base.mkdir(mode=0o755)
        for folder in (self.subs, self.out_dir, self.tmpdir, self.home, self.hidden.parent):
            folder.mkdir()
        self.tmpdir.chmod(0o1777)
        self.token, self.inputs = uuid.uuid4().hex, f"MARKER-hidden-inputs-{uuid.uuid4().hex}"
        self.hidden.write_text(HIDDEN_TEST.format(token=self.token, inputs=self.inputs))
        py_compile.compile(str(self.hidden), cfile=cache_from_source(str(self.hidden)))

    def hand_in(self, name: str, code: str, answers: str | None) -> Path:
        folder = self.subs / name
        folder.mkdir()
        (folder / "homework.py").write_text(code, encoding="utf-8")
        if answers is not None:
            (folder / "answers.toml").write_text(answers, encoding="utf-8")
        return folder

    def open_to_the_ordinary_user(self) -> None:
        """Everything readable by uid NOBODY, grades.csv's folder and its home its own."""
        for here, dirs, files in os.walk(self.base):
            for path in [Path(here), *(Path(here, f) for f in files)]:
                if path.is_relative_to(self.out_dir) or path.is_relative_to(self.home):
                    if os.geteuid() == 0:
                        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
                elif path.is_file() and not path.is_symlink() or path.is_dir():
                    path.chmod(path.stat().st_mode | (0o005 if path.is_dir() else 0o004))

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def rows_of(out: Path) -> dict[str, dict]:
    """grades.csv's rows by their student cell ({} where the grading wrote none)."""
    if not out.exists() or not out.stat().st_size:
        return {}
    with open(out, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def graded_by(prefix: list[str], layout: Layout, home: Path) -> tuple[float, str]:
    return grade(prefix, grader_env(home, layout.tmpdir), layout.subs, layout.out, layout.hidden)


@pytest.fixture(scope="session")
def alone(tmp_path_factory) -> dict:
    """The honest work graded by itself as root: {"row": its row, "warm": the compile caches' folder the grading
    made, or None}. Once a run: the first xdist worker grades it, the others wait for its result (the same
    grading makes the warm caches every later grading starts from)."""
    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared
    with open(shared / "generated-alone.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = shared / "generated-alone.json"
        if not kept.exists():
            layout = Layout(uuid.uuid4().hex)
            try:
                layout.hand_in("carl", HONEST, right_answers())
                seconds, said = graded_by([], layout, Path.home())
                row = rows_of(layout.out).get("carl")
            finally:
                layout.remove()
            warm = re.search(r"compile caches (/\S+) \(", said)
            kept.write_text(json.dumps({"row": row, "warm": warm and warm[1], "said": said, "seconds": seconds}))
        found = json.loads(kept.read_text())
    assert found["row"] is not None and float(found["row"]["percent"]) == 100.0, found["said"]
    return found


# ---- planted secrets ------------------------------------------------------------------------------


class Planted:
    """Secrets at random places of the host, each holding (or, a socket, sending) a marker of its own; a socket
    records every connection."""

    def __init__(self, layout: Layout, plan: list[tuple[int, str, int]]):
        where = [*host_places(), Path("/tmp"), layout.base, layout.subs, layout.hidden.parent]
        self.plan = [(where[i % len(where)] / f".stackcheck-gen-{uuid.uuid4().hex[:12]}", k, m) for i, k, m in plan]
        self.markers = {f"MARKER-gen-{kind}-{uuid.uuid4().hex}": path for path, kind, _ in self.plan}
        self.servers: list[socket.socket] = []
        self.reached: list[str] = []

    @property
    def paths(self) -> list[Path]:
        return [path for path, _, _ in self.plan]

    def plant(self) -> None:
        for (path, kind, mode), marker in zip(self.plan, self.markers):
            if kind == "socket":
                server = socket.socket(socket.AF_UNIX)
                server.bind(str(path))
                server.listen(4)
                self.servers.append(server)
                threading.Thread(target=self._send, args=(server, marker), daemon=True).start()
            elif kind == "folder":
                path.mkdir()
                (path / "inside.txt").write_text(f"{marker}\n")
            else:
                source = {"key": data.path(*checkpoints.KEY_FILE), "reference": Path(reference.__file__)}.get(kind)
                path.write_text((source.read_text(encoding="utf-8") if source else "") + f"\n# {marker}\n")
            path.chmod(mode)

    def _send(self, server: socket.socket, marker: str) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.reached.append(marker)
            with connection:
                connection.sendall(marker.encode())

    def remove(self) -> None:
        for server in self.servers:
            server.close()
        for path in self.paths:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                path.unlink()


# ---- judging a grading ----------------------------------------------------------------------------


def leaks(out_dir: Path, said: str, secret: dict[str, str], may_show: dict[str, str]) -> list[str]:
    """Each output of a grading (every file under ``out_dir``, the grader's own output ``said``) that holds a
    ``secret`` ({text: whose it is}), unless ``may_show`` gives that text a glob of the files (relative to
    ``out_dir``) where it may show: its owner's feedback, the instructor's record."""
    outputs = {"the grader's output": said}
    outputs |= {str(p.relative_to(out_dir)): p.read_text(errors="replace") for p in out_dir.rglob("*") if p.is_file()}
    return [
        f"{where} shows {whose}"
        for where, text in sorted(outputs.items())
        for s, whose in secret.items()
        if s in text and not fnmatch.fnmatchcase(where, may_show.get(s, ""))
    ]


def build_batch(batch: dict, layout: Layout, planted: Planted) -> dict:
    """The batch's folders under ``layout.subs``: {"stems", "secret", "may_show", "canary"}."""
    neighbour, attacker = batch["neighbour"], batch["attacker"]
    folders = [neighbour, attacker, *(name for name, _ in batch["extras"])]
    stems = names.stems(folders)
    mark = f"MARKER-neighbour-{uuid.uuid4().hex}"
    layout.hand_in(neighbour, f"# {mark}\n{HONEST}", f"{right_answers()}# {mark}\n")
    hosts = {
        "neighbour": layout.subs / neighbour,
        "key": data.path(*checkpoints.KEY_FILE),
        "hidden": layout.hidden,
        "out": layout.out,
    }
    secrets_at = [str(p) for p in planted.paths]

    def host(place) -> str:
        kind, which = place
        if kind == "secret":
            return secrets_at[which % len(secrets_at)]
        return str(hosts[kind] / which if which else hosts[kind])

    canary, written = f"CANARY-{uuid.uuid4().hex}", f"WRITTEN-{uuid.uuid4().hex}"
    reads = [*secrets_at, *(str(layout.subs / neighbour / f) for f in ("homework.py", "answers.toml"))]
    attack = {
        "canary": canary,
        "written": written,
        "reads": reads + [str(hosts["key"]), str(layout.hidden)],
        "acts": [(when, kind, path, host(arg) if kind == "link" else arg) for when, (kind, path, arg) in batch["acts"]],
    }
    layout.hand_in(attacker, HONEST + ATTACK.format(attack=attack), right_answers())
    for name, kind in batch["extras"]:
        stub = kind == "stub"
        folder = layout.hand_in(name, assignment.stub_source(["math"]) if stub else HONEST, None)
        if kind == "unparsable":
            (folder / "homework.py").write_text("def (:\n")
        elif kind == "fifo":
            os.mkfifo(folder / "answers.toml")
        elif kind.startswith("link"):
            to = host(("secret", 0)) if kind == "link to a secret" else layout.subs / neighbour / "answers.toml"
            (folder / "answers.toml").symlink_to(to)
        else:
            (folder / "answers.toml").write_text(checkpoints.template())
    secret = {m: f"the planted {p.name} ({p.parent})" for m, p in planted.markers.items()}
    secret |= secrets(layout.token, {}, {"tmpdir": str(layout.tmpdir)})
    secret |= {layout.inputs: "the hidden test's inputs", mark: "the neighbour's marker", written: "what it wrote"}
    may_show = {
        mark: f"grades-feedback/{stems[neighbour]}.*",
        written: f"grades-feedback/{stems[attacker]}.*",
        layout.inputs: "grades-feedback/*.instructor-only.json",
    }
    return {"stems": stems, "secret": secret, "may_show": may_show, "canary": canary}


def judged(batch: dict, built: dict, out: Path, alone: dict, said: str) -> list[str]:
    """What went wrong in the grading of ``batch`` that wrote ``out`` and said ``said`` (empty: it held)."""
    problems = [] if said.startswith("exit code 0\n") else [f"the grader exited: {said[:2000]}"]
    stems, feedback = built["stems"], out.parent / f"{out.stem}-feedback"
    rows = rows_of(out)
    if not rows:
        return problems + ["no grades.csv"]
    shown = {n: names.cell(names.display(n)) for n in stems}
    problems += csv_problems(out, sorted(shown.values()))
    for name, stem in stems.items():
        row = rows.get(shown[name])
        problems += own_files(feedback, stem, float(row["percent"])) if row else [f"no row for {shown[name]}"]
    honest = rows.get(shown[batch["neighbour"]], {})
    if {k: honest.get(k) for k in SAME_SCORE} != {k: alone["row"][k] for k in SAME_SCORE}:
        problems.append(f"the neighbour earned {[honest.get(k) for k in SAME_SCORE]}, alone {alone['row']['percent']}")
    problems += leaks(out.parent, said, built["secret"], built["may_show"])
    # what the attacker raised, quoted: "CANARY-… found <markers> in [<each path it read>]", where nothing is readable
    quoted = feedback / f"{stems[batch['attacker']]}.results.json"
    quoted = quoted.read_text(errors="replace") if quoted.exists() else ""
    canary, empty = built["canary"], f"{built['canary']} found nothing in []"
    if canary not in quoted:
        problems.append("the attack never ran: its feedback quotes nothing it raised")
    elif quoted.count(canary) != quoted.count(empty):
        start = next(m.start() for m in re.finditer(canary, quoted) if not quoted.startswith(empty, m.start()))
        problems.append(f"the attacker read a secret: {quoted[start : start + 600]}")
    return problems


def kept_to_reproduce(batch: dict, layout: Layout, planted: Planted, problems: list[str], said: str) -> Path:
    """The batch, what it was built into and what the grading wrote, under FOUND."""
    kept = FOUND / layout.base.name
    kept.mkdir(parents=True, exist_ok=True)
    with tarfile.open(kept / "handed-in.tar", "w") as tar:  # FIFOs and links as they are
        tar.add(layout.subs, "subs")
        tar.add(layout.hidden.parent, "instructor")
    shutil.copytree(layout.out_dir, kept / "out", dirs_exist_ok=True)
    planted_at = {m: str(p) for m, p in planted.markers.items()}
    what = {"batch": repr(batch), "problems": problems, "said": said, "planted": planted_at}
    (kept / "found.json").write_text(json.dumps(what, indent=1, default=str))
    return kept


def grade_generated(batch: dict, as_user: bool, alone: dict, pytestconfig) -> None:
    """Build ``batch``, plant its secrets, grade it and judge it: as uid NOBODY where ``as_user`` (the test's own
    user where that is not root), else as root."""
    if os.geteuid() != 0 and not as_user:
        pytest.skip(f"the test runs as uid {os.geteuid()}: the ordinary user's test grades as it")
    layout = Layout(uuid.uuid4().hex)
    planted = Planted(layout, batch["secrets"])
    prefix, home = [], Path.home()
    try:
        built = build_batch(batch, layout, planted)
        if as_user and os.geteuid() == 0:
            prefix, why_not = as_nobody(layout.home)
            if not prefix and "ordinary-user" in (pytestconfig.getoption("require", None) or []):
                raise Missing(why_not, "ordinary-user")
            if not prefix:
                pytest.skip(why_not)
            home = layout.home
            if alone["warm"]:  # the warm caches an instructor's earlier `stackcheck homework warm` made
                caches = layout.home / ".cache" / "stackcheck" / "grading-caches"
                shutil.copytree(alone["warm"], caches / Path(alone["warm"]).name)
        layout.open_to_the_ordinary_user()
        planted.plant()
        watched = (layout.subs, layout.hidden.parent, grader.suite_root() / "fixtures", *planted.paths)
        before = snapshot(*watched)
        seconds, said = graded_by(prefix, layout, home)
        after = snapshot(*watched)
        problems = judged(batch, built, layout.out, alone, said)
        problems += [f"changed {p}" for p in sorted({*before, *after}) if before.get(p) != after.get(p)]
        problems += [f"left in the grader's TMPDIR: {p}" for p in layout.tmpdir.iterdir()]
        problems += [f"a worker reached the socket of {m}" for m in sorted(set(planted.reached))]
        graded = ", ".join(f"{r['student']} {r['percent']} %" for r in rows_of(layout.out).values())
        print(f"uid {NOBODY if prefix else os.geteuid()} graded in {seconds:.0f} s: {graded}\n  {batch!r:.600}")
        if problems:
            kept = kept_to_reproduce(batch, layout, planted, problems, said)
            pytest.fail(f"kept in {kept}:\n" + "\n".join(problems[:40]), pytrace=False)
    finally:
        planted.remove()
        layout.remove()


@pytest.mark.grading_trial
@pytest.mark.usefixtures("bubblewrap")
@given(batch=batches())
@GENERATED
def test_a_generated_batch_graded_as_root_leaks_nothing_and_costs_its_neighbour_nothing(batch, alone, pytestconfig):
    """Each generated batch graded by root: its workers are the slots' uids."""
    grade_generated(batch, False, alone, pytestconfig)


@pytest.mark.grading_trial
@pytest.mark.usefixtures("bubblewrap")
@given(batch=batches())
@GENERATED
def test_a_generated_batch_graded_by_an_ordinary_user_leaks_nothing_and_costs_its_neighbour_nothing(
    batch, alone, pytestconfig
):
    """Each generated batch graded by uid 65534 (where the test runs as root): its workers in a user namespace.
    Its first batch, Hypothesis's simplest, is root's first; the next is its own (drawn from the test's name)."""
    grade_generated(batch, True, alone, pytestconfig)


# ---- the judge can fail ---------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["grades.csv", "grades-feedback/carl.results.json", "grades-feedback/dora.md"])
def test_a_marker_copied_into_any_output_is_a_leak(tmp_path, where):
    """``leaks`` flags a planted marker copied into grades.csv or a feedback file, and a neighbour's marker in
    another's feedback; its owner's own feedback and the instructor's record may show what is theirs."""
    marker, own = f"MARKER-gen-file-{uuid.uuid4().hex}", f"MARKER-neighbour-{uuid.uuid4().hex}"
    secret = {marker: "the planted file", own: "carl's marker"}
    may_show = {own: "grades-feedback/carl.*"}
    (tmp_path / "grades-feedback").mkdir()
    for name in ("grades.csv", "grades-feedback/carl.results.json", "grades-feedback/dora.md"):
        (tmp_path / name).write_text(f"score 100 %\n{own}\n" if name.startswith("grades-feedback/carl") else "ok\n")
    assert leaks(tmp_path, "exit code 0\n", secret, may_show) == []
    with open(tmp_path / where, "a") as f:
        f.write(f"read: {marker!r}\n")
    assert leaks(tmp_path, "exit code 0\n", secret, may_show) == [f"{where} shows the planted file"]
    found = leaks(tmp_path, f"[1/2] dora: {own}", secret, may_show)
    assert found == [f"{where} shows the planted file", "the grader's output shows carl's marker"]


def test_the_judge_of_a_grading_flags_a_missing_row_a_changed_neighbour_and_an_attack_that_read_or_never_ran(
    tmp_path,
):
    """``judged`` on a made-up grading: a neighbour that earned less than alone, a submission with no row, an
    attacker whose feedback quotes nothing it raised and one that says it read a path are each a problem; the same
    grading written right is none."""
    out = tmp_path / "grades.csv"
    (tmp_path / "grades-feedback").mkdir()
    batch = {"neighbour": "carl", "attacker": "carl.results", "extras": []}
    stems = names.stems(["carl", "carl.results"])
    built = {"stems": stems, "secret": {}, "may_show": {}, "canary": "CANARY-x"}
    row = {"percent": "100.0", "earned": "17.0", "claims": "S2.2-hand 2/2", "checkpoints": "Q1 2/2"}
    alone = {"row": row}

    def written(percent: str, rows: list[str], quoted: str) -> list[str]:
        cells = {"carl": percent, names.cell(names.display("carl.results")): "0"}
        with open(out, "w", newline="") as f:
            table = csv.writer(f)
            table.writerow(grader.COLUMNS)
            for name in rows:
                table.writerow([name, cells[name], row["earned"], 17, "graded", row["claims"], row["checkpoints"]])
        for stem, score in ((stems["carl"], float(percent)), (stems["carl.results"], 0.0)):
            results = {"score": score, "max_score": 100.0, "output": quoted if stem != "carl" else ""}
            (tmp_path / "grades-feedback" / f"{stem}.results.json").write_text(json.dumps(results))
        return judged(batch, built, out, alone, "exit code 0\nok")

    both = ["carl", "carl.results"]
    assert written("100.0", both, "CANARY-x found nothing in []\nCANARY-x found nothing in []") == []
    found = written("90.0", ["carl"], "nothing")
    assert any("neighbour earned" in p for p in found) and any("no row" in p for p in found), found
    assert any("never ran" in p for p in found), found
    found = written("100.0", both, "CANARY-x found nothing in []\nCANARY-x found nothing in ['/root/.key']")
    assert len(found) == 1 and found[0].startswith("the attacker read a secret: CANARY-x found nothing in ['/"), found
