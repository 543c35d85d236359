"""The ``stackcheck`` command: homework starters for students, batch grading for instructors.

stackcheck homework init DIR [--part math|ir|runtime|kernels|all]   the student's starter
stackcheck homework strip --part P [--out FILE]      reference.py without the solutions of P
stackcheck homework strip --part P --checkout DIR    the students' checkout: that, and no checkpoint key
stackcheck grade SUBMISSIONS --out grades.csv [--part P] [--tests PATH] [--timeout S] [--jobs N]
stackcheck watch DIR [-k EXPR]                      rerun what each save of DIR/homework.py changes
stackcheck merge REPORT.json REPORT.json ... --out matrix.html   one claim x machine matrix
stackcheck report REPORT.json [--html OUT] [--md OUT]   a saved report as its run's summary, page, Markdown
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.util
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from stackcheck.claims.results import NotAReport, Report
from stackcheck.homework import assignment, checkpoints, gradescope, sandbox, scoring
from stackcheck.impl import contract
from stackcheck.paths.data import path as data_path
from stackcheck.report import render as rendering

STUDENT_README = """# Week 02 homework (stackcheck)

Parts: {parts}. Write every function in `homework.py`: its docstring is the whole contract,
the checks it must make included. Answer the checkpoints Q1-Q5 in `answers.toml`.

Grade yourself from the stackcheck checkout (note the `=`):

    python -m pytest --homework={folder}

The run ends with your score and, for each claim of the course, what failed, the course
section to reread and what to revisit first, read from the failure. A function you have not written yet is
"not attempted" (it scores 0); a function that never returns is stopped after {timeout:g} s.
Claims this machine cannot check (no GPU, say) are listed apart and do not count against you.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stackcheck", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    work = commands.add_parser("homework", help="the student's starter, or a reference without solutions")
    steps = work.add_subparsers(dest="step", required=True)
    init = steps.add_parser("init", help="write homework.py, answers.toml and README.md into DIR")
    init.add_argument("dir")
    init.add_argument("--part", action="append", choices=[*assignment.PARTS, "all"], default=None)
    init.add_argument("--force", action="store_true", help="overwrite an existing homework.py")
    strip = steps.add_parser("strip", help="stackcheck/impl/reference.py with the parts' solutions replaced by stubs")
    strip.add_argument("--part", action="append", choices=[*assignment.PARTS, "all"], required=True)
    strip.add_argument("--out", default=None, help="file to write (default: standard output)")
    strip.add_argument(
        "--checkout",
        default=None,
        metavar="DIR",
        help="strip the copy of the checkout at DIR that students get: its reference.py, and the checkpoint key",
    )
    warm = steps.add_parser(
        "warm",
        help="make the compile caches that grading starts from, once per machine and torch/JAX version "
        "(stackcheck grade makes them when they are missing: about a minute on 2 cores)",
    )
    warm.add_argument("--part", action="append", choices=[*assignment.PARTS, "all"], required=True)
    warm.add_argument("--unsafe-no-sandbox", action="store_true", help="as stackcheck grade's")
    grade = commands.add_parser("grade", help="grade every submission folder, each in its own process")
    grade.add_argument("submissions", help="a folder of folders, one per student, each with homework.py")
    grade.add_argument("--out", required=True, help="the CSV to write; each student's feedback goes beside it")
    grade.add_argument(
        "--part",
        action="append",
        choices=[*assignment.PARTS, "all"],
        default=None,
        help="the parts to grade (default: each homework.py's ASSIGNED)",
    )
    grade.add_argument(
        "--tests",
        action="append",
        default=[],
        metavar="PATH",
        help="the instructor's own tests (files or folders students do not get); repeatable",
    )
    grade.add_argument("--timeout", type=float, default=600.0, help="wall-time limit per submission, seconds")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    grade.add_argument(
        "--visibility",
        choices=["visible", "hidden", "after_due_date", "after_published"],
        default="visible",
        help="Gradescope visibility of the results of the --tests (the instructor's hidden tests)",
    )
    grade.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade where Bubblewrap cannot sandbox: the limits only; a submission may write and read "
        "whatever this user may (docs/homework.md)",
    )
    watching = commands.add_parser("watch", help="rerun the CPU tests of what each save of DIR/homework.py changes")
    watching.add_argument("dir", help="the homework folder (holding homework.py)")
    watching.add_argument("-k", dest="keyword", default=None, help="narrow the reruns, as pytest -k does")
    watching.add_argument("--runs", type=int, default=None, help=argparse.SUPPRESS)  # the self-test's: stop after N
    merge = commands.add_parser("merge", help="several machines' curriculum reports as one claim x machine matrix")
    merge.add_argument("reports", nargs="+", help="curriculum reports (the JSON of --curriculum-report)")
    merge.add_argument("--out", required=True, help="the matrix to write: OUT.html, OUT.md and OUT.json")
    shown = commands.add_parser("report", help="a saved curriculum report as its run's summary, an HTML page, Markdown")
    shown.add_argument("file", help="a curriculum report (the JSON of --curriculum-report)")
    shown.add_argument("--html", default=None, metavar="OUT", help="also write it as an HTML page to OUT")
    shown.add_argument("--md", default=None, metavar="OUT", help="also write it as Markdown to OUT")
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            return show_report(Path(args.file), args.html, args.md)
        if args.command == "merge":
            from stackcheck.report import merge as merging

            written = merging.write(args.reports, args.out)
            print("wrote " + ", ".join(str(p) for p in written))
            return 0
        if args.command == "watch":
            from stackcheck.homework import watch

            return watch.watch(Path(args.dir), suite_root(), args.keyword, runs=args.runs)
        if args.command == "homework" and args.step == "init":
            return init_homework(Path(args.dir), args.part or ["math"], args.force)
        if args.command == "homework" and args.step == "warm":
            return prepare_caches(args.part, args.unsafe_no_sandbox)
        if args.command == "homework" and args.checkout:
            return strip_checkout(Path(args.checkout), args.part)
        if args.command == "homework":
            text = assignment.stripped_reference(args.part)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
            return 0
        return grade_all(
            Path(args.submissions),
            Path(args.out),
            args.part,
            args.tests,
            args.timeout,
            args.jobs,
            args.visibility,
            args.unsafe_no_sandbox,
        )
    except (OSError, ValueError) as error:
        print(f"stackcheck: {error}", file=sys.stderr)
        return 2


def show_report(path: Path, html_out: str | None, md_out: str | None) -> int:
    """The curriculum report saved at ``path`` printed as its run's summary (the same sections), and
    written as an HTML page and as Markdown where asked; a file that is no report is one line (main)."""
    from stackcheck.plugin import hookspecs
    from stackcheck.report import html

    report = Report.load(path)
    try:  # the parts a report keeps as the JSON they are (homework, drift, listings, evidence) are read here
        sections = hookspecs.sections(report)
        asked = ((html_out, html.page), (md_out, rendering.markdown))
        pages = [(out, render(report, sections)) for out, render in asked if out]
    except (TypeError, KeyError, IndexError, AttributeError, ValueError) as error:
        said = (str(error).splitlines() or [""])[0]
        raise NotAReport(
            f"{path}: not a curriculum report stackcheck can render: {type(error).__name__}: {said}"
        ) from None
    for title, lines in sections:
        print(f" stackcheck: {title} ".center(80, "-"))
        print("\n".join(lines))
    for out, text in pages:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
    if pages:
        print("wrote " + ", ".join(out for out, _ in pages))
    return 0


def init_homework(folder: Path, parts: list[str], force: bool) -> int:
    target = folder / "homework.py"
    if target.exists() and not force:
        raise ValueError(f"{target} exists; --force overwrites it (and answers.toml)")
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(assignment.stub_source(parts), encoding="utf-8")
    (folder / "answers.toml").write_text(checkpoints.template(), encoding="utf-8")
    (folder / "README.md").write_text(
        STUDENT_README.format(parts=", ".join(parts), folder=folder, timeout=contract.TIMEOUT_S), encoding="utf-8"
    )
    names = sorted(assignment.assigned(parts))
    print(
        f"stackcheck: wrote {target} ({len(names)} functions to write), {folder / 'answers.toml'} (Q1-Q5) and "
        f"{folder / 'README.md'}"
    )
    return 0


def strip_checkout(checkout: Path, parts: list[str]) -> int:
    """The students' copy of the checkout: ``parts``' solutions stubbed in its reference.py, and its
    checkpoint key removed (their runs then say "answered" for those fields; the grader judges them)."""
    target = checkout / "stackcheck" / "impl" / "reference.py"
    if not target.is_file():
        raise ValueError(f"--checkout {checkout}: not a stackcheck checkout (no stackcheck/impl/reference.py)")
    target.write_text(assignment.stripped_reference(parts), encoding="utf-8")
    key = checkout.joinpath(*checkpoints.KEY_FILE)
    key.unlink(missing_ok=True)
    print(f"stripped {target} ({', '.join(parts)}) and removed {key}")
    return 0


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


def prepare_caches(parts: list[str], unsafe: bool) -> int:
    """``stackcheck homework warm``: the compile caches a grading of ``parts`` starts from, made now
    (a set-up step, so that the first grading is as fast as the next)."""
    _require_sandbox(unsafe)
    root = suite_root()
    jail = sandbox.Jail(readable=(root,), hidden=(data_path(*checkpoints.KEY_FILE),))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stackcheck-warm-") as scratch:
        made = warm_caches(root, parts, Path(scratch), 600.0, jail, unsafe)
    if made is None:
        print("stackcheck homework warm: the solutions did not run; grading will compile cold", file=sys.stderr)
        return 1
    print(f"stackcheck homework warm: {made} ({time.monotonic() - start:.0f} s)")
    return 0


def grade_all(
    submissions: Path,
    out: Path,
    parts: list[str] | None,
    extra: list[str],
    timeout: float,
    jobs: int = 1,
    visibility: str = "visible",
    unsafe: bool = False,
) -> int:
    folders = sorted(p for p in submissions.iterdir() if (p / "homework.py").is_file()) if submissions.is_dir() else []
    if not folders:
        raise ValueError(f"{submissions}: no submission folders (each needs a homework.py)")
    if jobs < 1:
        raise ValueError(f"--jobs {jobs}: give 1 or more")
    _require_sandbox(unsafe)
    root = suite_root()
    feedback = out.parent / f"{out.stem}-feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    instructor = [Path(t).resolve() for t in extra]
    absent = [str(p) for p in instructor if not p.exists()]
    if absent:
        raise ValueError(f"--tests {absent[0]}: no such file or folder")
    key = checkpoints.expected_answers()  # measured once here, not once a submission; with the key
    with tempfile.TemporaryDirectory(prefix="stackcheck-grade-") as scratch, ThreadPoolExecutor(jobs) as pool:
        # a submission sees none of the handed-in folders, the other copies, the feedback, the
        # instructor's tests (each run gets a copy it collects before the student's file loads) or the key
        covered = (submissions.resolve(), feedback.resolve(), *instructor, data_path(*checkpoints.KEY_FILE))
        jail = sandbox.Jail(readable=(root,), hidden=covered)
        chosen = parts or sorted({p for f in folders for p in assignment.declared(str(f / "homework.py")) or ("all",)})
        start = time.monotonic()
        warm = warm_caches(root, chosen, Path(scratch), timeout, jail, unsafe)
        print(
            f"stackcheck grade: compile caches {warm or 'none (the warm-up failed): each run compiles cold'} "
            f"({time.monotonic() - start:.0f} s)"
        )

        def graded(folder: Path) -> tuple[dict, float]:
            start = time.monotonic()
            args = (parts, instructor, timeout, Path(scratch), key, visibility, jail, unsafe, warm)
            return grade_one(folder, root, feedback / folder.name, *args), time.monotonic() - start

        done = list(pool.map(graded, folders))
    rows = [row for row, _ in done]
    for folder, (row, seconds) in zip(folders, done):
        print(f"stackcheck grade: {folder.name}: {row['percent']} % ({row['status']}) in {seconds:.0f} s")
    columns = ["student", "percent", "earned", "points", "status"]
    columns += sorted({k for r in rows for k in r} - set(columns))
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"stackcheck grade: {len(rows)} submission(s) -> {out}; feedback in {feedback}/")
    return 0


def grade_one(
    folder: Path,
    root: Path,
    report: Path,
    parts,
    instructor: list[Path],
    timeout: float,
    scratch: Path,
    key: dict[str, dict[str, object]],
    visibility: str = "visible",
    jail: sandbox.Jail | None = None,
    unsafe: bool = False,
    warm: Path | None = None,
) -> dict:
    """One submission, sandboxed (stackcheck.homework.sandbox) on a working copy; its CSV row (the
    total, the points per claim and checkpoint, the checkpoint key for the instructor) and its
    feedback: Markdown, JSON, HTML and a Gradescope results.json. ``instructor``: the instructor's
    tests, of which each run gets a fresh copy; ``key``: every checkpoint's expected answer, judged
    here, outside the sandbox; ``jail``: what the sandbox hides and shows besides; ``unsafe``: grade
    without a sandbox where there is none; ``warm``: compile caches its run starts from (a copy)."""
    copy = sandbox.working_copy(folder.resolve(), scratch / "work")
    if warm is not None:
        shutil.rmtree(copy / ".cache", ignore_errors=True)
        shutil.copytree(warm, copy / ".cache", symlinks=True)
    written_to = scratch / "out" / folder.name  # the one folder besides the copy the run may write
    shutil.rmtree(written_to, ignore_errors=True)
    written_to.mkdir(parents=True)
    staging = scratch / "instructor" / folder.name
    inside = sandbox.seen_at(staging, sandbox.INSTRUCTOR_TESTS)  # where the run finds them
    names = _staged_names(instructor)
    command = [
        sys.executable,
        "-m",
        "pytest",
        f"--homework={copy}",
        "--homework-graded",
        f"--curriculum-report={written_to / report.name}.json",
        "-p",
        "no:cacheprovider",
        "-v",  # names each test as it starts: a run stopped at the wall limit says where
        f"--rootdir={root}",
        *(f"--homework-part={p}" for p in parts or []),
        *(str(root / part) for part in assignment.PARTS.values()),
        *([f"--homework-instructor-tests={inside}", *(str(inside / n) for n in names)] if instructor else []),
    ]  # an install has no testpaths
    mounted = ((staging, sandbox.INSTRUCTOR_TESTS),) if instructor else ()
    jail = dataclasses.replace(jail or sandbox.Jail(), writable=(written_to,), mounted=mounted)

    def stage() -> None:  # a fresh copy for each run: the last one deleted its copy once collected
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for source, name in zip(instructor, names):
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, staging / name)

    done, crashed = _run_past_crashes(command, copy, timeout, written_to / report.name, jail, unsafe, stage)
    for suffix in REPORT_FILES:  # the report's files, to the feedback folder; nothing else the run wrote there
        made = written_to / f"{report.name}{suffix}"
        if made.is_file() and not made.is_symlink():
            shutil.copy2(made, report.parent / made.name)
    if done.returncode is None:
        running = _running_test(done.stdout)
        where = f" in {running}" if running else ""
        if running and root not in (copy / running.partition("::")[0]).resolve().parents:  # never named to them
            where = " in a test the instructor keeps hidden"
        stopped = f"# {folder.name}\n\nGrading stopped after {timeout:g} s{where}.\n"
        report.parent.joinpath(f"{report.name}.md").write_text(stopped)
        return {
            "student": folder.name,
            "percent": 0,
            "earned": 0,
            "points": "",
            "status": f"timed out ({timeout:g} s){where}",
        }
    written = report.parent / f"{report.name}.json"
    said = done.stderr.strip() or done.stdout.strip()
    try:
        full = Report.load(written) if written.exists() else None
    except NotAReport as error:  # written inside the sandbox, where the submission ran
        full, said = None, f"{said}\n{error}"
    data = full.homework if full is not None else None
    if data is None:
        error = said.splitlines()
        report.parent.joinpath(f"{report.name}.md").write_text(
            f"# {folder.name}\n\nNot graded:\n\n```\n{chr(10).join(error[-20:])}\n```\n"
        )
        return {
            "student": folder.name,
            "percent": 0,
            "earned": 0,
            "points": "",
            "status": f"not graded: {error[-1] if error else f'pytest exit code {done.returncode}'}",
        }
    if "no_score" in data:
        return {"student": folder.name, "percent": 0, "earned": 0, "points": "", "status": data["no_score"]}
    # the checkpoints judged here, with the key, from the answers as handed in
    answers, _ = checkpoints.load_answers(folder / "answers.toml")
    data = scoring.with_checkpoints(data, checkpoints.settle(data["checkpoints"], answers, key))
    full = full.with_(homework=data)
    rendering.write(full, str(written), [("homework", scoring.lines(data))])
    from stackcheck.plugin.homework import instructors_file

    kept = instructors_file(str(written))  # the hidden tests' results, for the instructor alone
    withheld = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else []
    gradescope.write(report.parent / f"{report.name}.results.json", full, withheld, visibility)
    row = {
        "student": folder.name,
        "percent": data["percent"],
        "earned": data["earned"],
        "points": data["points"],
        "status": f"graded (sandbox {done.sandbox}; network {done.network})"
        + (f"; {len(crashed)} test(s) crashed it" if crashed else ""),
    }
    row.update({c["id"]: c["earned"] for c in data["claims"]})
    row.update({f"checkpoint {q['id']}": q["earned"] for q in data["checkpoints"]})
    row.update(checkpoint_key_columns(folder / "answers.toml", key))
    return row


def warm_caches(root: Path, parts: list[str], scratch: Path, timeout: float, jail, unsafe: bool) -> Path | None:
    """Compile caches (torch Inductor's, Triton's, JAX's, the suite's builds) made by grading the course's
    solutions to ``parts`` once, sandboxed like a submission; each submission's run starts from a copy
    of them and compiles only what its own code changes. Kept in the suite's cache folder for the
    next grading with these versions of torch and JAX; None where the run failed (then each
    submission compiles cold)."""
    from importlib import metadata

    from stackcheck.impl import reference
    from stackcheck.paths.data import cache_dir

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "none"

    stacks = "-".join(f"{name}{version(name)}" for name in ("torch", "jax"))  # what the caches were made by
    template = cache_dir() / "grading-caches" / f"{'-'.join(parts)}-{stacks}"
    if (template / "ok").exists():
        return template
    work = scratch / "warm" / "solutions"
    work.mkdir(parents=True)
    (work / "homework.py").write_text(Path(reference.__file__).read_text() + f"\nASSIGNED = {tuple(parts)!r}\n")
    command = [sys.executable, "-m", "pytest", f"--homework={work}", "--homework-graded", "-p", "no:cacheprovider"]
    command += ["-q", f"--rootdir={root}", *(str(root / part) for part in assignment.folders(parts))]
    if importlib.util.find_spec("xdist") and (os.cpu_count() or 1) > 1:  # it runs alone: on two cores, 62 s -> 53 s
        command += ["-n", "2"]
    done = sandbox.run(command, work, sandbox.Limits(wall_s=max(timeout, 600)), jail, unsafe)
    if done.returncode not in (0, 1) or not any((work / ".cache").glob("*/*")):  # it compiled nothing: it never ran
        return None
    (work / ".cache" / "ok").write_text(" ".join(parts))
    made = template.with_name(f"{template.name}.{uuid.uuid4().hex[:8]}")
    made.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(work / ".cache", made)
    try:
        made.rename(template)
    except OSError:  # another grading made it first
        shutil.rmtree(made, ignore_errors=True)
    return template


def _staged_names(instructor: list[Path]) -> list[str]:
    """The name of each instructor's test file or folder in a run's copy (numbered where two share one)."""
    names = [p.name for p in instructor]
    return [n if names.count(n) == 1 else f"{i}_{n}" for i, n in enumerate(names)]


REPORT_FILES = (".json", ".md", ".html", ".instructor-only.json")  # what a graded run writes for the feedback
MAX_CRASHES = 3  # restarts of one submission's run after a test killed it


def _run_past_crashes(
    command: list[str],
    copy: Path,
    timeout: float,
    report: Path,
    jail: sandbox.Jail | None = None,
    unsafe=False,
    stage=lambda: None,
):
    """The sandboxed run of ``command``; when a test kills the process (a signal: native code of the
    student's), run again with that test failed at once, at most MAX_CRASHES times, within the one wall
    limit. ``stage()`` readies each run (the instructor's tests' copy). (the last Outcome, {test id:
    what killed the run in it})"""
    crashed: dict[str, str] = {}
    listed = report.parent / f"{report.name}.crashed.json"
    deadline = time.monotonic() + timeout
    while True:
        stage()
        extra = [f"--homework-crashed={listed}"] if crashed else []
        limits = sandbox.Limits(wall_s=max(1.0, deadline - time.monotonic()))
        done = sandbox.run([*command, *extra], copy, limits, jail, unsafe)
        test = _running_test(done.stdout)
        killed = done.returncode is not None and done.returncode < 0
        if not killed or test is None or test in crashed or len(crashed) == MAX_CRASHES:
            return done, crashed
        crashed[test] = _crash_message(done, copy / "homework.py")
        listed.write_text(json.dumps(crashed), encoding="utf-8")


def _running_test(stdout: str) -> str | None:
    """The test pytest -v had started last (its id opens the line, its outcome never came)."""
    running = [line.split()[0] for line in stdout.splitlines() if "::" in line and line.split()]
    return running[-1] if running else None


def _crash_message(done, student_file: Path) -> str:
    """What killed the run, named by the signal and the student's function faulthandler saw."""
    how = signal.Signals(-done.returncode).name if -done.returncode in signal.valid_signals() else "a signal"
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\w+)', done.stderr)
    own = [(line, name) for path, line, name in frames if Path(path).name == student_file.name]
    where = f" in {own[0][1]} ({student_file.name}:{own[0][0]})" if own else ""
    return (
        f"crashed: the grading process was killed by {how}{where} during this test; the test earns nothing, "
        "and the rest was graded in a new process"
    )


def checkpoint_key_columns(answers_path: Path, key: dict[str, dict[str, object]]) -> dict[str, str]:
    """For the instructor's CSV only: each checkpoint field as the student answered it, with the key."""
    answers, _ = checkpoints.load_answers(answers_path)
    return {
        f"{qid} {name}": f"{answers.get(qid, {}).get(name, '')!r} (key {expected!r})"
        for qid, fields in key.items()
        for name, expected in fields.items()
    }


if __name__ == "__main__":
    sys.exit(main())
