"""Grading a class (``stackcheck grade``): each submission copied safely, judged by its own pytest
process (the judge: the suite's tests, the instructor's tests, the score, the checkpoints), which
never imports the submission: the judge reaches the student's functions through a worker process,
sandboxed without privileges (stackcheck.grading.sandbox, stackcheck.grading.judge). One submission's
failure of any kind is that submission's 0 with its reason; every other row, feedback file and
Gradescope ``results.json`` is written all the same, and so is ``grades.csv`` when grading is stopped
(SIGTERM, SIGINT: what was not graded says so) or its clean-up fails.

What a submission controls is data: its folder's name is shown escaped and names files only through
stackcheck.grading.names; its answers are read once, before its code runs, from the copy the
grader made of what was handed in; after the run the grader never opens, follows or walks anything
in the worker's writable copy, and removes it with a routine that cannot raise or hang
(copies.remove_tree).
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import importlib.util
import json
import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from stackcheck.claims.results import NotAReport, Report
from stackcheck.grading import copies, names, sandbox
from stackcheck.homework import assignment, checkpoints, gradescope, scoring
from stackcheck.paths import data
from stackcheck.plugin.homework import instructors_file
from stackcheck.report import render as rendering

REPORT_FILES = (".json", ".md", ".html", ".instructor-only.json")  # what a judge writes for the feedback
ANSWERS_BYTES = 64 * 1024  # answers.toml as handed in: a few hundred bytes filled in
AREA = "area"  # in the scratch folder: each submission's writable places (copies.area)
WARM_SHARDS = 4  # at most this many judges make the warm caches at once (each imports every stack)
COLUMNS = ["student", "percent", "earned", "points", "status", "claims", "checkpoints"]  # then the key's fields


@dataclass(frozen=True)
class Setup:
    """What every submission of one grading shares."""

    root: Path  # the suite's checkout (or install)
    parts: list[str] | None
    instructor: list[Path]
    timeout: float
    key: dict[str, dict[str, object]]
    visibility: str
    unsafe: bool
    hidden: tuple[Path, ...]  # what no worker sees, besides what the judge covers
    warm: Path | None = None
    select: str | None = None  # pytest -k: grade only the tests this selects
    shard: str | None = None  # the warm-up's --homework-shard=K/N
    slots: int = 1  # workers running at once: each holds its share of the memory


def submissions_in(folder: Path, besides: tuple[Path, ...] = ()) -> list[Path]:
    """Every entry of ``folder`` a student handed in: each not hidden (a dot first: the system's
    files) and not one of ``besides`` (the grading's own outputs, written there). One without a
    ``homework.py`` at its top (of any kind: a link or a FIFO is refused with its reason) is graded
    0 with what it holds, never skipped; none where no entry holds one (not a folder of submissions)."""
    if not folder.is_dir():
        return []
    here = folder.resolve()
    own = {b.name for b in besides if b.parent.resolve() == here}  # never resolve an entry: a link may loop
    found = sorted(p for p in folder.iterdir() if p.name[:1] != "." and p.name not in own)
    return found if any(os.path.lexists(p / "homework.py") for p in found) else []


def misplaced(entry: Path) -> str | None:
    """Why a handed-in entry has nothing to grade (no homework.py at its top: a file, a zip, a folder
    holding it deeper), saying what it holds; None where it has one."""
    if os.path.lexists(entry / "homework.py"):
        return None
    if entry.is_symlink() or not entry.is_dir():
        return "refused: a file or a link, not a folder holding homework.py (an archive is unpacked before grading)"
    try:  # one level down, and its first 200 entries: a folder of any depth or size costs nothing
        names = [e.name for _, e in zip(range(200), os.scandir(entry))]
        deeper = [f"{n}/homework.py" for n in sorted(names) if os.path.lexists(entry / n / "homework.py")][:3]
    except OSError as error:
        return f"refused: its folder cannot be read ({type(error).__name__})"
    near = sorted(n for n in names if n.lower() == "homework.py")
    held = f"it holds {', '.join(deeper)}" if deeper else f"a name of another case: {near[0]}" if near else "none in it"
    return f"refused: no homework.py at the folder's top ({held}); hand in homework.py itself, at the top"


PARSE_BYTES = 1024**2  # a file the grader parses itself for its ASSIGNED: an honest one is ~30 KB


def chosen_parts(folders: list[Path], parts: list[str] | None) -> list[str]:
    """The parts to warm caches for: ``parts``, else those the parsable files declare (a file that
    does not parse adds none, and runs no test), else all; none where no file parses. The grader
    parses no file over PARSE_BYTES in its own process (a 16 MB list literal: 12 GB and a minute):
    such a file adds no part here, and its own judge, under its memory limit, reads it."""
    if parts:
        return parts
    declared, parsed = set(), False
    for folder in folders:
        path = folder / "homework.py"
        try:  # a submission's file: whatever it holds adds at most the course's parts it names
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= PARSE_BYTES:
                tree = assignment.parsed(str(path))
                if tree is not None:
                    parsed = True
                    declared.update(p for p in assignment.declared(str(path), tree) or () if p in assignment.PARTS)
        except Exception:  # noqa: BLE001 - one file never stops the batch: its own judge says what is wrong
            continue
    return sorted(declared) or (["all"] if parsed else [])


def grade_all(
    submissions: Path,
    out: Path,
    parts: list[str] | None,
    extra: list[str],
    timeout: float,
    jobs: int = 1,
    visibility: str = "visible",
    unsafe: bool = False,
    root: Path | None = None,
    select: str | None = None,
) -> int:
    feedback = out.parent / f"{out.stem}-feedback"
    folders = submissions_in(submissions, besides=(out, feedback))
    if not folders:
        raise ValueError(f"{submissions}: no submission folders (each needs a homework.py)")
    if jobs < 1:
        raise ValueError(f"--jobs {jobs}: give 1 or more")
    _require_sandbox(unsafe)
    instructor = [Path(t).resolve() for t in extra]
    absent = [str(p) for p in instructor if not p.exists()]
    if absent:
        raise ValueError(f"--tests {absent[0]}: no such file or folder")
    feedback.mkdir(parents=True, exist_ok=True)
    out.touch()  # covered in every worker, as the folder of feedback is
    key = checkpoints.expected_answers()  # measured once here, not once a submission; with the key
    stems = names.stems([f.name for f in folders])
    students = [Student(f, stems[f.name], names.display(f.name)) for f in folders]
    rows: dict[Path, dict] = {}
    with _scratch(lambda: _write_rows(out, feedback, students, rows, key)) as scratch:
        compiled = [p.parent / "__pycache__" for p in instructor if p.is_file() and (p.parent / "__pycache__").is_dir()]
        hidden = (submissions.resolve(), feedback.resolve(), out.resolve(), *instructor, *compiled, scratch)
        setup = Setup(root or suite_root(), parts, instructor, timeout, key, visibility, unsafe, hidden, select=select)
        chosen = chosen_parts(folders, parts)
        start = time.monotonic()
        if chosen:
            warm = warm_caches(setup, chosen, scratch, shards=min(jobs, WARM_SHARDS, os.cpu_count() or 1))
            said = warm or "none (the warm-up failed): each run compiles cold"
        else:
            warm, said = None, "none: no submission parses, so none runs a test"
        print(f"stackcheck grade: compile caches {said} ({time.monotonic() - start:.0f} s)", flush=True)
        jobs = _side_by_side(jobs, unsafe)
        setup = dataclasses.replace(setup, warm=warm, slots=jobs)
        slots = queue.SimpleQueue()
        for slot in range(jobs):
            slots.put(slot)
        for who in students:  # nothing to grade: a row with what it holds
            if (why := misplaced(who.folder)) is not None:
                rows[who.folder] = _unscored(who, why, feedback)
                print(f"stackcheck grade: [{len(rows)}/{len(folders)}] {who.shown}: 0 % ({names.printable(why)})")
        before = len(rows)
        with ThreadPoolExecutor(jobs) as pool:
            graded = [who for who in students if who.folder not in rows]
            futures = {pool.submit(_graded, who, setup, feedback, scratch, slots): who for who in graded}
            try:
                for done, future in enumerate(as_completed(futures), before + 1):
                    who = futures[future]
                    row, seconds = future.result()
                    rows[who.folder] = row
                    print(
                        f"stackcheck grade: [{done}/{len(folders)}] {who.shown}: {row['percent']} % "
                        f"({names.printable(row['status'])}) in {seconds:.0f} s",
                        flush=True,
                    )
            except BaseException:  # SIGTERM or SIGINT (_stop): no judge goes on, none starts
                _stop_judges()
                pool.shutdown(wait=True, cancel_futures=True)
                rows.update({futures[f].folder: f.result()[0] for f in futures if f.done() and not f.cancelled()})
                raise
    print(f"stackcheck grade: {len(rows)} submission(s) -> {out}; feedback in {feedback}/")
    return 0


def _side_by_side(jobs: int, unsafe: bool) -> int:
    """How many submissions are graded at once: ``jobs`` where each worker beside another costs it
    nothing (sandbox.slots_isolated), else one at a time, saying why."""
    if jobs == 1 or unsafe:
        return jobs
    isolated, why = sandbox.slots_isolated()
    if isolated and not copies.areas_sized():
        isolated, why = False, "this machine lets the grader mount no sized tmpfs for each submission's writes"
    if not isolated:
        print(f"stackcheck grade: --jobs {jobs}: one submission at a time: {why}", flush=True)
        return 1
    return jobs


@dataclass(frozen=True)
class Student:
    """One submission: its folder as handed in, the stem of its files, its id as shown."""

    folder: Path
    stem: str
    shown: str


def _write_rows(out: Path, feedback: Path, students: list[Student], rows: dict[Path, dict], key: dict) -> None:
    """grades.csv with a row per submission (one that has none yet was stopped before it was graded,
    and gets its feedback saying so), every cell safe for spreadsheets. A row that earned nothing is
    out of the points most graded rows were out of (0 where none was graded)."""
    for who in students:
        if who.folder not in rows:
            rows[who.folder] = _unscored(who, "not graded: grading was stopped before this submission's turn", feedback)
    offered = collections.Counter(r["points"] for r in rows.values() if r["points"] != "")
    most = max(offered.items(), key=lambda found: (found[1], found[0]))[0] if offered else 0
    for row in rows.values():
        if row["points"] == "":
            row["points"] = most
    columns = COLUMNS + [f"{qid} {name}" for qid, fields in key.items() for name in fields]
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: names.cell(v) for k, v in rows[who.folder].items()} for who in students)


class _scratch:
    """The grading's scratch folder: at the end, on an error, and on SIGTERM or SIGINT, the judges
    still running are killed, ``finish`` writes what grading has, and the folder is removed."""

    def __init__(self, finish=None):
        self.finish = finish

    def __enter__(self) -> Path:
        self.folder = Path(tempfile.mkdtemp(prefix="stackcheck-grade-")).resolve()
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self.previous[sig] = signal.signal(sig, _stop)
        return self.folder

    def __exit__(self, *exc) -> None:
        _stop_judges()
        sandbox.sweep_cgroups()
        try:
            if self.finish is not None:
                self.finish()
        finally:
            for sig, handler in self.previous.items():
                signal.signal(sig, handler)
            _STOPPING.clear()
            areas = self.folder / AREA
            for place in os.listdir(areas) if areas.is_dir() else []:  # a grading stopped mid-way
                copies.remove_area(areas / place)
            copies.remove_tree(self.folder)


_RUNNING: set[subprocess.Popen] = set()  # the judges running now: killed when grading stops
_STOPPING = threading.Event()  # set when grading stops: no further judge starts


def _stop(signum, frame):
    raise SystemExit(128 + signum)


def _stop_judges() -> None:
    _STOPPING.set()
    for process in list(_RUNNING):
        _kill(process)


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _graded(who: Student, setup: Setup, feedback: Path, scratch: Path, slots: queue.SimpleQueue) -> tuple[dict, float]:
    """One submission's row, whatever happens to it (its seconds too), graded in a free slot of
    ``slots`` (one per job: its worker's uid is the slot's alone while it runs)."""
    start = time.monotonic()
    slot = slots.get()
    try:
        row = grade_one(who, setup, feedback, scratch, sandbox.worker_uid(slot))
    except copies.Refused as error:
        row = _unscored(who, f"refused: {error}", feedback)
    except Exception as error:  # noqa: BLE001 - one submission never stops the batch
        row = _unscored(who, f"not graded: {type(error).__name__}: {error}", feedback)
    finally:
        copies.remove_area(scratch / AREA / who.stem)  # the worker's writable places: data, never read again
        slots.put(slot)
    return row, time.monotonic() - start


def _unscored(who: Student, status: str, feedback: Path) -> dict:
    """The row, feedback (Markdown, HTML) and results.json of a submission that earned nothing, with
    the reason; its row's points are the grading's, filled in with the others (``_write_rows``)."""
    said = {".md": f"# {who.shown}\n\nscore: 0 %\n\n{status}\n", ".html": _unscored_page(who.shown, status)}
    for suffix, text in said.items():
        (feedback / f"{who.stem}{suffix}").write_text(text, encoding="utf-8", errors="backslashreplace")
    results = {"score": 0, "max_score": 0, "output": status, "visibility": "visible", "tests": []}
    text = json.dumps(results, indent=2, ensure_ascii=False)
    (feedback / f"{who.stem}.results.json").write_text(text, encoding="utf-8", errors="backslashreplace")
    return {"student": who.shown, "percent": 0, "earned": 0, "points": "", "status": status}


def _unscored_page(shown: str, status: str) -> str:
    from stackcheck.report import html

    body = [f"<header><h1>{html.esc(shown)}</h1></header>", "<p><strong>score: 0 %</strong></p>"]
    return html.document(f"{shown}: score 0 %", [*body, f"<pre>{html.esc(status)}</pre>"])


def grade_one(who: Student, setup: Setup, feedback: Path, scratch: Path, uid: int = sandbox.UID) -> dict:
    """One submission: a safe copy, its judge, its row (total, points per claim and checkpoint, the
    checkpoint key for the instructor) and its feedback: Markdown, JSON, HTML, Gradescope results.
    Its answers are read from the copy before its code runs; after that the copy is never read.
    ``uid``: its worker's host uid where the grader is root."""
    folder, stem = who.folder, who.stem
    if _STOPPING.is_set():
        return _unscored(who, "not graded: grading was stopped before this submission's turn", feedback)
    if folder.is_symlink() or not folder.is_dir():
        raise copies.Refused("the submission is a link, not a folder")
    area = copies.area(scratch / AREA / stem, sized=not setup.unsafe)
    copy = copies.working_copy(folder, area / "work", stem)
    if not (copy / "homework.py").is_file():
        raise copies.Refused("no homework.py")
    handed_in = copies.read_regular(copy / "answers.toml", ANSWERS_BYTES)
    cache = area / "cache"
    if setup.warm is not None:
        shutil.copytree(setup.warm, cache, symlinks=True)
    cache.mkdir(parents=True, exist_ok=True)
    judge = scratch / "judge" / stem
    done, report = _judge(copy, cache, judge, setup, setup.parts, handed_in, uid)
    if _STOPPING.is_set():
        return _unscored(who, "not graded: grading was stopped while this submission ran", feedback)
    if done is None:
        return _unscored(who, f"timed out ({setup.timeout:g} s)", feedback)
    try:
        full = Report.load(report) if report.exists() else None
    except NotAReport as error:
        full = None
        done = f"{done}\n{error}"
    data = full.homework if full is not None else None
    if data is None:
        lines = [line for line in done.splitlines() if line.strip()]
        said = _relative(lines[-1], copy, scratch) if lines else "the judge wrote no report"
        return _unscored(who, f"not graded: {said}", feedback)
    if data.no_score is not None:
        return _unscored(who, _unparsed(_relative(data.no_score, copy, scratch)), feedback)
    answers, _ = checkpoints.load_answers(judge / ANSWERS)
    data = scoring.with_checkpoints(data, checkpoints.settle(data.checkpoints, answers, setup.key))
    full = Report.from_json(json.loads(_relative(full.with_(homework=data).dumps(), copy, scratch)))
    written = feedback / f"{stem}.json"
    rendering.write(full, str(written), [("homework", scoring.lines(full.homework))])
    kept = instructors_file(str(report))
    withheld = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else []
    if kept.exists():
        shutil.copyfile(kept, feedback / f"{stem}.instructor-only.json")
    gradescope.write(feedback / f"{stem}.results.json", full, withheld, setup.visibility)
    data = full.homework
    return {
        "student": who.shown,
        "percent": data.percent,
        "earned": data.earned,
        "points": data.points,
        "status": f"graded (sandbox {_sandbox_kind()})",
        "claims": "; ".join(f"{c.id} {c.earned:g}/{c.points:g}" for c in data.claims),
        "checkpoints": "; ".join(f"{q.id} {q.earned:g}/{q.points:g}" for q in data.checkpoints),
        **checkpoint_key_columns(answers, setup.key),
    }


JUDGE_MEMORY_BYTES = 8 * 1024**3  # a judge's heap (RLIMIT_DATA): a judge of part math peaked at 0.8 GB


def _limit_memory(process: subprocess.Popen) -> None:
    """A judge's own memory limit, set as it starts (Python's start-up allocates little): one
    submission's answers that make its judge allocate cost that judge, never the machine the others
    are graded on. RLIMIT_DATA, not the address space: CUDA and XLA reserve far more than they use."""
    try:
        resource.prlimit(process.pid, resource.RLIMIT_DATA, (JUDGE_MEMORY_BYTES, JUDGE_MEMORY_BYTES))
    except (OSError, ValueError):
        pass  # it has ended already, or this system has no such limit


def _unparsed(said: str) -> str:
    """A file that does not parse says so first, with its line: "does not parse: homework.py line 3: ..."."""
    found = re.search(r"homework\.py:(\d+): SyntaxError: (.*)", said)
    return f"does not parse: homework.py line {found[1]}: {found[2]}" if found else said


def _sandbox_kind() -> str:
    """The worker's sandbox and network, as the CSV's status says them (sandbox.start decides the same way)."""
    if sandbox.bubblewrap()[0]:
        return "bubblewrap; network isolated"
    return f"none (unsafe); network {sandbox.network_isolation()[1]}"


def _relative(text: str, copy: Path, scratch: Path | None = None) -> str:
    """Feedback names the student's own files as the student knows them, never the grader's scratch
    (any other path under it reads as ``<grading>``)."""
    for shown in (json.dumps(str(copy))[1:-1], str(copy)):
        text = text.replace(shown + "/", "").replace(shown, ".")
    for shown in (json.dumps(str(scratch))[1:-1], str(scratch)) if scratch is not None else ():
        text = text.replace(shown, "<grading>")
    return text


ANSWERS = "answers.toml"  # in the judge's folder: the answers as handed in, read before the run


def _judge(
    copy: Path, cache: Path, folder: Path, setup: Setup, parts, answers: bytes | None = None, uid: int = sandbox.UID
) -> tuple[str | None, Path]:
    """Run the judge for the copy, with ``answers`` (answers.toml's bytes as handed in; None: there
    were none): (its output, or None at the wall limit; where its report is)."""
    from stackcheck.paths.data import ROOT

    copies.remove_tree(folder)
    staged = folder / sandbox.INSTRUCTOR_TESTS
    staged.mkdir(parents=True)
    if answers is not None:
        (folder / ANSWERS).write_bytes(answers)
    staged_names = _staged_names(setup.instructor)
    for source, name in zip(setup.instructor, staged_names):
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, staged / name)
    ungradable = setup.warm / UNGRADABLE if setup.warm is not None else None
    settings = {
        "jail": sandbox.Jail(hidden=setup.hidden, cache=cache, uid=uid).to_json(),
        "unsafe": setup.unsafe,
        "wall_s": setup.timeout,
        "resident_bytes": sandbox.resident_share(setup.slots),
    }
    (folder / "worker.json").write_text(json.dumps(settings), encoding="utf-8")
    report = folder / "report.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        f"--homework={copy}",
        "--homework-graded",
        f"--homework-answers={folder / ANSWERS}",
        f"--homework-worker={folder / 'worker.json'}",
        *([f"--homework-ungradable={ungradable}"] if ungradable is not None and ungradable.exists() else []),
        f"--curriculum-report={report}",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:unraisableexception",  # its gc passes at exit cost a judge 1.4 s of 26, and report nothing scored
        "-q",
        f"--rootdir={setup.root}",
        *(f"--homework-part={p}" for p in parts or []),
        *(["-k", setup.select] if setup.select else []),
        *([f"--homework-shard={setup.shard}"] if setup.shard else []),
        *(str(setup.root / part) for part in assignment.PARTS.values()),
        *(str(staged / n) for n in staged_names),
    ]  # an install has no testpaths
    private = folder / "tmp"  # the judge's own temporary files, gone with the scratch folder
    private.mkdir()
    # The judge writes bytecode (its rewritten tests, read again by the next judge): beside the suite's
    # tests, which every worker's jail covers, and beside the staged instructor's tests, in scratch
    env = {**os.environ, "PYTHONHASHSEED": "0", "TMPDIR": str(private)}
    # this grader's own stackcheck, the suite it grades (started bare, the judge could import another
    # copy, an editable install's, whose protections in the worker's jail then cover that copy alone)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile("w+b") as output:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _RUNNING.add(process)
        _limit_memory(process)
        if _STOPPING.is_set():  # grading stopped while this judge started
            _kill(process)
        try:
            process.wait(timeout=setup.timeout)
            said = sandbox.capped(output)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.wait()
            said = None
        finally:
            _RUNNING.discard(process)
            sandbox.sweep_cgroups()  # its workers' cgroups, where it ended before it closed them
    return said, report


def warm_caches(setup: Setup, parts: list[str], scratch: Path, shards: int = 1) -> Path | None:
    """Compile caches (torch Inductor's, Triton's, JAX's, the suite's builds) made by grading the course's
    solutions to ``parts`` once, as a submission; each submission's worker starts from a copy of them
    and compiles only what its own code changes. The same run calibrates: a test the course's own
    solution fails when graded so (its judge never holds the code it judges) is listed in the
    template's UNGRADABLE file, and skipped for every submission. With ``shards`` above 1, that many
    judges each run their share of the tests at once (the cold compiles are most of the warm-up),
    and their caches and lists are joined. Kept in the suite's cache folder for the next grading with
    this suite and these versions of torch and JAX; None where a run failed (then each submission
    compiles cold, and nothing is skipped)."""
    from importlib import metadata

    from stackcheck.paths.data import cache_dir

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "none"

    stacks = "-".join(f"{name}{version(name)}" for name in ("torch", "jax"))  # what the caches were made by
    template = cache_dir() / "grading-caches" / f"worker-{'-'.join(parts)}-{stacks}-{_suite_digest(setup.root)}"
    if (template / "ok").exists():
        return template
    runs = max(1, shards)
    folders = {k: scratch / "warm" / str(k) for k in range(1, runs + 1)}
    with ThreadPoolExecutor(runs) as pool:
        shares = list(pool.map(lambda k: _warm_shard(setup, parts, folders[k], k, runs), folders))
    if any(share is None for share in shares):
        return None
    cache, listed = shares[0]
    for other, more in shares[1:]:
        shutil.copytree(other, cache, dirs_exist_ok=True, copy_function=_copy_absent)  # content-addressed files
        listed.update(more)
    (cache / UNGRADABLE).write_text(json.dumps(listed, indent=1, sort_keys=True), encoding="utf-8")
    (cache / "ok").write_text(" ".join(parts))
    made = template.with_name(f"{template.name}.{uuid.uuid4().hex[:8]}")
    made.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(cache, made)
    try:
        made.rename(template)
    except OSError:  # another grading made it first
        shutil.rmtree(made, ignore_errors=True)
    return template


def _warm_shard(setup: Setup, parts: list[str], folder: Path, shard: int, shards: int):
    """(its cache, {test id: why} of the tests it failed): the solutions graded on the ``shard``-th of
    ``shards`` shares of the tests, in ``folder``; None where it did not run."""
    from stackcheck.impl import reference

    work = folder / "solutions"
    work.mkdir(parents=True)
    solutions = Path(reference.__file__).read_text() + f"\nASSIGNED = {tuple(parts)!r}\n" + OWN_MOJO
    (work / "homework.py").write_text(solutions)
    shutil.copytree(data.path("mojo", "study_relu"), work / "study_relu")  # its own copy: the suite's is hidden
    cache = folder / "cache"
    cache.mkdir()
    warmup = dataclasses.replace(
        setup,
        timeout=max(setup.timeout, 600.0),
        instructor=[],
        select=None,
        shard=f"{shard}/{shards}" if shards > 1 else None,
    )
    said, report = _judge(work, cache, folder / "judge", warmup, parts)
    if said is None or not any(cache.glob("*/*")) or not report.exists():  # it compiled nothing: it never ran
        return None
    try:
        failed = [t for _, t in Report.load(report).tests() if t.outcome in ("failed", "interrupted")]
    except NotAReport:
        return None
    return cache, {t.nodeid: (t.message or t.outcome.value) for t in failed}


def _copy_absent(source: str, target: str) -> None:
    if not os.path.exists(target):
        shutil.copy2(source, target)


OWN_MOJO = """

def mojo_package():
    from pathlib import Path

    return Path(__file__).parent / "study_relu"
"""  # the solutions' Mojo package as a submission hands its own in (beside homework.py)
UNGRADABLE = "ungradable.json"  # in a warm template: {test id: why} the solution failed when graded


def _suite_digest(root: Path) -> str:
    """A digest of the suite's own code (its tests and the package): a calibration holds for one suite."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted([*root.glob("stackcheck/**/*.py"), *root.glob("tests_*/**/*.py")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def prepare_caches(parts: list[str], unsafe: bool) -> int:
    """``stackcheck homework warm``: the compile caches a grading of ``parts`` starts from, made now
    (a set-up step, so that the first grading is as fast as the next)."""
    _require_sandbox(unsafe)
    start = time.monotonic()
    with _scratch() as scratch:
        setup = Setup(suite_root(), parts, [], 600.0, {}, "visible", unsafe, (scratch,))
        made = warm_caches(setup, parts, scratch, shards=min(WARM_SHARDS, os.cpu_count() or 1))
    if made is None:
        print("stackcheck homework warm: the solutions did not run; grading will compile cold", file=sys.stderr)
        return 1
    print(f"stackcheck homework warm: {made} ({time.monotonic() - start:.0f} s)")
    return 0


def _staged_names(instructor: list[Path]) -> list[str]:
    """The name of each instructor's test file or folder in a judge's copy (numbered where two share one)."""
    names = [p.name for p in instructor]
    return [n if names.count(n) == 1 else f"{i}_{n}" for i, n in enumerate(names)]


def checkpoint_key_columns(answers: dict, key: dict[str, dict[str, object]]) -> dict[str, str]:
    """For the instructor's CSV only: each checkpoint field as the student answered it, with the key."""
    return {
        f"{qid} {name}": f"{answers.get(qid, {}).get(name, '')!r} (key {expected!r})"
        for qid, fields in key.items()
        for name, expected in fields.items()
    }


def suite_root() -> Path:
    """The folder holding the test packages (the checkout, or site-packages for an installed suite)."""
    spec = importlib.util.find_spec("tests_math")
    if spec is None or not spec.origin:
        raise ValueError("the stackcheck test folders are not importable; install stackcheck or run from its checkout")
    return Path(spec.origin).resolve().parent.parent


def _require_sandbox(unsafe: bool) -> None:
    """Refuse, in one line with the fix, to grade where Bubblewrap cannot sandbox, unless ``unsafe``."""
    bwrap, why = sandbox.bubblewrap()
    if bwrap is None and not unsafe:
        raise ValueError(f"no sandbox available: {why}")
