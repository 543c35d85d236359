"""The ``stackcheck`` command: homework starters for students, batch grading for instructors.

stackcheck homework init DIR [--part math|ir|runtime|kernels|all]   the student's starter
stackcheck homework strip --part P [--out FILE]      reference.py without the solutions of P
stackcheck homework strip --part P --checkout DIR    the students' checkout: that, no checkpoint key, no tests_meta
stackcheck grade SUBMISSIONS --out grades.csv [--part P] [--tests PATH] [--timeout S] [--jobs N]
stackcheck watch DIR [-k EXPR]                      rerun what each save of DIR/homework.py changes
stackcheck merge REPORT.json REPORT.json ... --out matrix.html   one claim x machine matrix
stackcheck report REPORT.json [--html OUT] [--md OUT]   a saved report as its run's summary, page, Markdown
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from stackcheck.claims.results import NotAReport, Report
from stackcheck.grading import grader
from stackcheck.homework import assignment, checkpoints
from stackcheck.impl import contract
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
        help="strip the copy of the checkout at DIR that students get: reference.py, the checkpoint key, tests_meta",
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
        "-k", dest="select", default=None, metavar="EXPR", help="grade only the tests EXPR selects, as pytest -k"
    )
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

            return watch.watch(Path(args.dir), grader.suite_root(), args.keyword, runs=args.runs)
        if args.command == "homework" and args.step == "init":
            return init_homework(Path(args.dir), args.part or ["math"], args.force)
        if args.command == "homework" and args.step == "warm":
            return grader.prepare_caches(args.part, args.unsafe_no_sandbox)
        if args.command == "homework" and args.checkout:
            return strip_checkout(Path(args.checkout), args.part)
        if args.command == "homework":
            text = assignment.stripped_reference(args.part)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
            return 0
        return grader.grade_all(
            Path(args.submissions),
            Path(args.out),
            args.part,
            args.tests,
            args.timeout,
            args.jobs,
            args.visibility,
            args.unsafe_no_sandbox,
            select=args.select,
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
    """The students' copy of the checkout: ``parts``' solutions stubbed in its reference.py, its checkpoint
    key removed (their runs then say "answered" for those fields; the grader judges them), and its
    tests_meta removed: the suite's own proof holds correct implementations of every part (the variants),
    and a student's run never needs it."""
    target = checkout / "stackcheck" / "impl" / "reference.py"
    if not target.is_file():
        raise ValueError(f"--checkout {checkout}: not a stackcheck checkout (no stackcheck/impl/reference.py)")
    target.write_text(assignment.stripped_reference(parts), encoding="utf-8")
    key = checkout.joinpath(*checkpoints.KEY_FILE)
    key.unlink(missing_ok=True)
    shutil.rmtree(checkout / "tests_meta", ignore_errors=True)
    print(f"stripped {target} ({', '.join(parts)}), removed {key} and {checkout / 'tests_meta'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
