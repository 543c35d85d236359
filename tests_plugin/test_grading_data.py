"""What a submission controls is data (issue 74, items 3 and 4). Its folder's name, any bytes of any
length, is shown escaped and names files only through stems that no two names share; every CSV cell
is safe for spreadsheets; the worker's writable copy, whatever was made in it (links out, FIFOs, any
depth, folders closed to their owner), is removed without raising, hanging or following anything;
a handed-in file is read without following a link or waiting on a FIFO; grades.csv is written with
a row per submission when grading is stopped."""

from __future__ import annotations

import csv
import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.grading import copies, grader, names

pytestmark = pytest.mark.meta

SUFFIXES = (*grader.REPORT_FILES, ".results.json")  # every file a grading writes for a student
NAME_MAX = 255  # bytes in one file name, on Linux's filesystems

folder_names = st.binary(min_size=1, max_size=300).filter(lambda b: b"/" not in b and b"\0" not in b)
folder_names = folder_names.filter(lambda b: b not in (b".", b"..")).map(os.fsdecode)
# what students name folders, made likely: ASCII ids, the suite's own suffixes, Korean, formulas, case twins
likely = st.sampled_from(
    ["carl", "Carl", "carl.results", "carl.instructor-only", "=2+3", "김철수", "-1", "@x", "a~b", "\xa0", "\\xa0"]
    + [os.fsdecode(b"\xa0"), os.fsdecode("김철수".encode("cp949")), "\u2028", "x\u200by"]
)


@given(st.lists(st.one_of(likely, folder_names), min_size=1, max_size=12, unique=True))
@settings(max_examples=300, deadline=None)
def test_no_two_names_write_one_file_and_every_file_name_fits(given_names):
    stems = names.stems(given_names)
    files = [f"{stems[n]}{suffix}" for n in given_names for suffix in SUFFIXES]
    assert len({f.casefold() for f in files}) == len(files), "two names write one file (case ignored)"
    for f in files:
        assert len(os.fsencode(f)) <= NAME_MAX and "/" not in f and f.isprintable(), f
    for name in given_names:
        assert stems[name] == name or "~" in stems[name], "a name keeps its files' names only where it is plain"


@given(st.lists(st.one_of(likely, folder_names), min_size=1, max_size=12, unique=True))
@settings(max_examples=300, deadline=None)
def test_each_name_is_shown_apart_printable_and_never_as_a_formula(given_names):
    shown = [names.display(n) for n in given_names]
    assert len(set(shown)) == len(shown), "two names show alike"
    for text in shown:
        text.encode("utf-8")  # a name's undecodable bytes (CP949 unpacked on Linux) never stop the CSV
        assert text.isprintable() and len(text) <= names.SHOWN_CHARS, text
        assert not str(names.cell(text)).startswith(names.FORMULA_START), text


def test_a_cell_that_a_spreadsheet_would_run_is_text():
    for formula in ("=2+3", "+1", "-1+A1", "@SUM(A1)", "\tx"):
        assert names.cell(formula) == "'" + formula
    assert names.cell("\rx") == "\\u000dx", "a carriage return is escaped: nothing left to run"
    assert names.cell("carl") == "carl" and names.cell(0) == 0 and names.cell(97.5) == 97.5


@given(st.text(min_size=1, max_size=80))
@settings(max_examples=200, deadline=None)
def test_a_cell_and_a_printed_status_hold_nothing_a_terminal_or_spreadsheet_acts_on(text):
    """Issue 74: a status quotes what a submission raised; an escape sequence there rewrote the grader's
    progress lines (another student's result erased, a fake one printed, the window's title set)."""
    for made in (names.printable(text), names.cell(text)):
        assert all(c in "\n\t " or c.isprintable() for c in made), repr(made)


@given(st.text(min_size=0, max_size=3 * names.CELL_CHARS))
@settings(max_examples=100, deadline=None)
def test_a_cell_is_never_longer_than_its_cap_and_says_where_it_was_cut(text):
    made = names.cell(text)
    assert len(made) <= names.CELL_CHARS + 1, len(made)
    shown = names.printable(text)
    assert made in (shown, "'" + shown) or made.endswith(f" [... {len(shown)} chars]")


def test_grades_csv_has_a_row_for_each_submission_that_was_never_graded(tmp_path):
    """Grading stopped before a submission's turn still writes its row (its points the others') and its
    feedback (JSON, Markdown, HTML), saying so; a name's cells are text, whatever they start with."""
    folders = [tmp_path / "=2+3", tmp_path / "carl"]
    students = [
        grader.Student(f, names.stems([f.name for f in folders])[f.name], names.display(f.name)) for f in folders
    ]
    rows = {folders[1]: {"student": "carl", "percent": 100, "points": 12, "status": "graded"}}
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    feedback.mkdir()
    grader._write_rows(out, feedback, students, rows, {})
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [r["student"] for r in table] == ["'=2+3", "carl"]
    assert table[0]["status"].startswith("not graded: grading was stopped"), table[0]
    assert table[0]["points"] == "12", "a row that earned nothing is out of what the others were graded on"
    for suffix in (".results.json", ".md", ".html"):
        assert "grading was stopped" in (feedback / f"{students[0].stem}{suffix}").read_text(encoding="utf-8")


# ---- the worker's copy after its run --------------------------------------------------------------


def tree_node():
    """A random entry a submission could leave: a file, a FIFO, a link out (to a file, a folder, nowhere),
    or a folder of any mode holding more."""
    leaves = st.sampled_from(["file", "fifo", "link-file", "link-folder", "dangling"])
    return st.recursive(
        leaves,
        lambda inner: st.tuples(st.sampled_from([0o000, 0o500, 0o700, 0o300]), st.lists(inner, max_size=4)),
        max_leaves=25,
    )


def plant(folder: Path, node, secret: Path, counter=iter(range(10**9))) -> None:
    path = folder / f"e{next(counter)}"
    if node == "file":
        path.write_bytes(b"x")
    elif node == "fifo":
        os.mkfifo(path)
    elif node == "link-file":
        path.symlink_to(secret / "keep.txt")
    elif node == "link-folder":
        path.symlink_to(secret)
    elif node == "dangling":
        path.symlink_to(folder / "nowhere")
    else:
        mode, children = node
        path.mkdir()
        for child in children:
            plant(path, child, secret)
        path.chmod(mode)


def digest_of(folder: Path) -> str:
    found = hashlib.sha256()
    for here, dirs, files in sorted(os.walk(folder)):
        for name in sorted(dirs + files):
            info = os.lstat(Path(here, name))
            found.update(f"{name} {stat.filemode(info.st_mode)}".encode())
    return found.hexdigest()


def removed_in_time(path: Path, seconds: float = 60) -> bool:
    """Whether remove_tree returned within ``seconds`` (a FIFO opened would block it for ever)."""
    done = threading.Thread(target=copies.remove_tree, args=(path,), daemon=True)
    done.start()
    done.join(seconds)
    return not done.is_alive()


def folders_planted(node) -> int:
    """The folders ``plant`` makes of ``node``."""
    return 0 if isinstance(node, str) else 1 + sum(map(folders_planted, node[1]))


def listings(monkeypatch) -> list:
    """Every folder remove_tree lists, as it lists it."""
    listed, real = [], os.listdir
    monkeypatch.setattr(os, "listdir", lambda fd=".": listed.append(fd) or real(fd))
    return listed


@given(st.lists(tree_node(), min_size=1, max_size=5))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_copy_is_removed_whatever_was_made_in_it_and_nothing_it_links_to_is_touched(tmp_path_factory, nodes):
    base = tmp_path_factory.mktemp("tree")
    secret = base / "secret"
    secret.mkdir()
    (secret / "keep.txt").write_text("the key")
    (secret / "inner").mkdir()
    before = digest_of(secret)
    copy = base / "copy"
    copy.mkdir()
    for node in nodes:
        plant(copy, node, secret)
    folders = 1 + sum(map(folders_planted, nodes))
    with pytest.MonkeyPatch.context() as patch:
        listed = listings(patch)
        assert removed_in_time(copy), "remove_tree hung"
    assert len(listed) == folders, "each folder is listed once"
    assert not os.path.lexists(copy) and digest_of(secret) == before and (secret / "keep.txt").read_text() == "the key"


def test_a_chain_deeper_than_any_recursion_or_path_is_removed(tmp_path):
    """3,000 folders deep (past Python's recursion limit, and past PATH_MAX as a path), a FIFO and a
    folder no one may enter at the bottom."""
    copy = tmp_path / "copy"
    copy.mkdir()
    fd = os.open(copy, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = below
    os.mkfifo("fifo", dir_fd=fd)
    os.mkdir("closed", mode=0, dir_fd=fd)
    os.close(fd)
    assert removed_in_time(copy) and not copy.exists()


def test_a_folder_of_many_folders_is_removed_listing_each_once(tmp_path, monkeypatch):
    """From a determined student's attack: 30,000 empty folders side by side in the copy. Listing the
    parent again after each folder removed took time in the square of their number (4,000: 30 s), held
    the grading thread, and left no grades.csv. Each folder is listed once: the work is linear."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for i in range(20_000):
        (copy / f"d{i}").mkdir()
    (copy / "d7" / "inner").mkdir()
    listed = listings(monkeypatch)
    assert removed_in_time(copy) and not copy.exists()
    assert len(listed) == 20_002


def test_remove_tree_never_raises_and_removes_a_file_or_a_link_alone(tmp_path):
    copies.remove_tree(tmp_path / "absent")
    copies.remove_tree(Path("/proc/self/status"))  # a file it cannot remove: left, no error
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    copies.remove_tree(link)
    assert not os.path.lexists(link) and target.is_dir()


@pytest.mark.parametrize("kind", ["regular", "link", "fifo", "too big", "folder", "absent"])
def test_a_handed_in_file_is_read_without_following_or_waiting(tmp_path, kind):
    path, secret = tmp_path / "answers.toml", tmp_path / "key.toml"
    secret.write_text("[Q1]\n")
    if kind == "regular":
        path.write_text("[Q2]\n")
    elif kind == "link":
        path.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "too big":
        path.write_bytes(b"#" * 101)
    elif kind == "folder":
        path.mkdir()
    start = time.monotonic()
    read = copies.read_regular(path, 100)
    assert time.monotonic() - start < 5
    assert read == (b"[Q2]\n" if kind == "regular" else None)


# ---- a grading stopped ----------------------------------------------------------------------------

STOPPED = """
import subprocess, sys, time
from pathlib import Path
from stackcheck.grading import grader

grader.warm_caches = lambda *a, **k: None
grader._require_sandbox = lambda unsafe: None


def slow(who, setup, feedback, scratch, uid=None):
    if who.folder.name == "carl":
        return {{"student": who.shown, "percent": 100, "earned": 1, "points": 1, "status": "graded"}}
    process = subprocess.Popen(["sleep", "600"], start_new_session=True)
    grader._RUNNING.add(process)
    Path({started!r}).write_text(str(process.pid))
    process.wait()
    grader._RUNNING.discard(process)
    return {{"student": who.shown, "percent": 0, "earned": 0, "points": 1, "status": "killed"}}


grader.grade_one = slow
sys.exit(grader.grade_all(Path({subs!r}), Path({out!r}), ["math"], [], 60.0, jobs=1, unsafe=True))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_grading_stopped_by_a_signal_writes_every_row_and_ends_its_judges(tmp_path, sig):
    """A fresh grader process, as an instructor's command is, stopped by ``sig`` while a judge runs: it
    ends at once, its judge with it, and grades.csv holds a row for each submission: the graded, the one
    that was running, and the ones never reached, each saying so."""
    subs, out, started = tmp_path / "subs", tmp_path / "grades.csv", tmp_path / "started"
    for name in ("carl", "dora", "emil", "finn"):
        (subs / name).mkdir(parents=True)
        (subs / name / "homework.py").write_text("x = 1\n")
    code = STOPPED.format(started=str(started), subs=str(subs), out=str(out))
    stopping = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline and stopping.poll() is None:
        time.sleep(0.1)
    assert started.exists(), "the slow judge never started"
    judge = int(started.read_text())
    stopping.send_signal(sig)
    assert stopping.wait(timeout=60) == 128 + sig
    with open(out, newline="", encoding="utf-8") as f:
        rows = {r["student"]: r["status"] for r in csv.DictReader(f)}
    assert rows["carl"] == "graded" and set(rows) == {"carl", "dora", "emil", "finn"}, rows
    assert all("stopped" in rows[n] for n in ("emil", "finn")), rows
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(judge, 0)


@given(digits=st.integers(1, 70_000), tail=st.sampled_from(["!", "x!", " ", "1.", "a b"]))
@settings(max_examples=25, deadline=None)
def test_a_number_answer_of_any_length_is_judged_at_once(digits, tail):
    """Issue 74: a 65 KB answer of digits made the number check backtrack for 71 s, in the grader's own
    process, holding every other grading thread."""
    from stackcheck.homework import checkpoints

    start = time.monotonic()
    assert not checkpoints.same("1" * digits + tail, 4.0, {"unit": "mb"})
    assert time.monotonic() - start < 0.5
    for right in ("4", "4 MB", " 4.0mb ", "+4.02 mb"):
        assert checkpoints.same(right, 4.0, {"unit": "mb"}), right
    assert not checkpoints.same("4 GB", 4.0, {"unit": "mb"}) and not checkpoints.same("4 2", 4.0, {"unit": "mb"})


def test_the_grader_parses_no_large_submission_in_its_own_process(tmp_path, monkeypatch):
    """From a determined student's attack: graded without --part, the grader parsed every homework.py
    itself to read its ASSIGNED (a 16 MB list literal: 12 GB, a minute, before any grading). It parses
    none over PARSE_BYTES; such a file adds no part, and its own judge reads it under its limits."""
    from stackcheck.grading import grader
    from stackcheck.homework import assignment

    parsed = []
    monkeypatch.setattr(assignment, "parsed", lambda path: parsed.append(path) or None)
    small, large = tmp_path / "small", tmp_path / "large"
    for folder, size in ((small, 100), (large, grader.PARSE_BYTES + 1)):
        folder.mkdir()
        (folder / "homework.py").write_text("x = [" + "1," * (size // 2) + "]\n")
    grader.chosen_parts([small, large], None)
    assert parsed == [str(small / "homework.py")]


# ---- what a student hands in that holds no homework.py at its top ----------------------------------


@given(
    kind=st.sampled_from(["nested", "case", "file", "empty"]),
    name=st.text(st.characters(codec="utf-8", exclude_characters="/\x00."), min_size=1, max_size=20),
)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_submission_without_homework_py_at_its_top_gets_a_row_saying_what_it_holds(tmp_path, kind, name):
    """A determined student's find: a folder holding hw/homework.py, a Homework.py, a zip handed in as
    it is, or an empty folder got no row in grades.csv at all (a student with no grade and no reason).
    Each now gets a 0 with what it holds; the grading's own outputs written among the submissions are
    never taken for one."""
    from stackcheck.grading import grader

    base = tmp_path / uuid.uuid4().hex[:8]
    subs = base / "subs"
    (subs / "carl").mkdir(parents=True)
    (subs / "carl" / "homework.py").write_text("x = 1\n")
    entry = subs / f"{name}-{kind}"
    if kind == "file":
        entry.write_bytes(b"PK\x03\x04")
    else:
        entry.mkdir()
        if kind == "nested":
            (entry / "hw").mkdir()
            (entry / "hw" / "homework.py").write_text("x = 1\n")
        elif kind == "case":
            (entry / "Homework.py").write_text("x = 1\n")
    (subs / ".DS_Store").write_text("")
    out = subs / "grades.csv"
    graded = []

    def judged(who, setup, feedback, scratch, uid=None):
        graded.append(who.folder.name)
        return {"student": who.shown, "percent": 100, "earned": 1, "points": 1, "status": "graded"}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader, "warm_caches", lambda *a, **k: None)
        patch.setattr(grader, "_require_sandbox", lambda unsafe: None)
        patch.setattr(grader, "grade_one", judged)
        assert grader.grade_all(subs, out, ["math"], [], 60.0, jobs=1, unsafe=True) == 0
        assert grader.grade_all(subs, out, ["math"], [], 60.0, jobs=1, unsafe=True) == 0  # its outputs beside
    with open(out, newline="", encoding="utf-8") as f:
        rows = {r["student"]: r["status"] for r in csv.DictReader(f)}
    assert graded == ["carl", "carl"] and len(rows) == 2, rows
    (status,) = [s for student, s in rows.items() if student != "carl"]
    held = {"nested": "it holds hw/homework.py", "case": "Homework.py", "file": "a file", "empty": "none in it"}
    assert status.startswith("refused:") and held[kind] in status, status


@pytest.mark.parametrize("kind", ["deep", "loop", "unhashable", "unknown part"])
def test_no_entry_stops_the_batch_or_costs_a_neighbour(tmp_path, kind):
    """A determined student's finds: an entry without homework.py holding a 1,500-deep chain (the
    grader's search of it raised RecursionError outside any submission's own try), a link to itself
    (its path resolved before any row could be written), ``ASSIGNED = {[]: 1}`` (a TypeError from
    reading it) and ``ASSIGNED`` naming a part that does not exist (the warm-up failed for everyone,
    and the neighbour's tests the course's own solution cannot pass here counted against it). Each
    entry gets its own row; the neighbour is graded as alone; the warm-up's parts are the course's."""
    from stackcheck.grading import grader

    subs, out = tmp_path / "subs", tmp_path / "grades.csv"
    (subs / "carl").mkdir(parents=True)
    (subs / "carl" / "homework.py").write_text("ASSIGNED = ('math',)\n")
    mallory = subs / "mallory"
    if kind == "deep":
        mallory.mkdir()
        fd = os.open(mallory, os.O_RDONLY)
        for _ in range(1500):  # one level at a time, by descriptor: no path is that long
            os.mkdir("d", dir_fd=fd)
            fd, parent = os.open("d", os.O_RDONLY, dir_fd=fd), fd
            os.close(parent)
        os.close(fd)
    elif kind == "loop":
        mallory.symlink_to(mallory)
    else:
        mallory.mkdir()
        named = "{[]: 1}" if kind == "unhashable" else "('math', 'nosuchpart')"
        (mallory / "homework.py").write_text(f"ASSIGNED = {named}\n")
    graded, warmed = [], []

    def judged(who, setup, feedback, scratch, uid=None):
        graded.append(who.folder.name)
        return {"student": who.shown, "percent": 100, "earned": 1, "points": 1, "status": "graded"}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grader, "warm_caches", lambda setup, parts, *a, **k: warmed.append(parts))
        patch.setattr(grader, "_require_sandbox", lambda unsafe: None)
        patch.setattr(grader, "grade_one", judged)
        try:
            assert grader.grade_all(subs, out, None, [], 60.0, jobs=1, unsafe=True) == 0
        finally:
            if kind == "deep":  # pytest's own clean-up recurses: the suite's removes any depth
                copies.remove_tree(mallory)
    with open(out, newline="", encoding="utf-8") as f:
        rows = {r["student"]: r["status"] for r in csv.DictReader(f)}
    assert set(rows) == {"carl", "mallory"} and rows["carl"] == "graded", rows
    assert warmed == [["math"]], warmed
    if kind in ("deep", "loop"):
        assert rows["mallory"].startswith("refused:") and graded == ["carl"], rows
