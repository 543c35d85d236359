"""Issue 50's attack corpus (tests_plugin/grading_attacks/: data, never collected): part-math submissions
that attack ``stackcheck grade``, each honest work (or a stub, wrong work, borrowed work) plus one attack,
described by its attack.toml. Built here (the solutions are never shipped: the honest work is the
reference's source, as the grading trial of test_sandbox.py builds it; what git cannot hold, FIFOs,
symlinks, devices, bad bytes, is made from the manifest), graded at --jobs 2 with a hidden test as
root and again as an ordinary user, and judged: each attack earns what its work earns, no file
outside its copy changes, nothing hidden reaches any feedback, grades.csv lists every submission in
fixed columns, and the re-grade is byte-identical. Each grading runs the grader in a fresh process, as an
instructor's command does: its sandboxed workers and another user's interpreter are the separation under
test, which no in-process run has."""

from __future__ import annotations

import csv
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
import threading
import time
import tomllib
import uuid
from importlib.util import cache_from_source
from pathlib import Path

import pytest

from stackcheck import grading
from stackcheck.claims import catalogue
from stackcheck.homework import assignment, checkpoints, names
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
    paths = [str(grading.suite_root()), *filter(None, [env.get("PYTHONPATH")])]
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
        ["git", "-C", str(grading.suite_root()), "show", f"HEAD:{'/'.join(checkpoints.KEY_FILE)}"],
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
        for root in (Path.home(), grading.suite_root() / "fixtures", data.cache_dir()):
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
        "checkout": str(grading.suite_root()),
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
    watched = (subs, hidden.parent, grading.suite_root() / "fixtures", *home_markers)
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
    roots = (base, *(p.parent for p in home_markers), grading.suite_root() / "fixtures", *map(Path, places["caches"]))
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
    done = subprocess.run(["git", "-C", str(grading.suite_root()), "rev-parse", "HEAD"], capture_output=True, text=True)
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
    public = data.checkout_files(grading.suite_root()) or list(CORPUS.parent.glob("*.py"))
    flagged = [str(p) for p in public if p != key and secret(p.read_text(encoding="utf-8", errors="replace"))]
    assert not flagged, f"public files a detector takes for a secret: {flagged[:10]}"
