"""The ``stackcheck`` command: homework starters for students, batch grading for instructors.

stackcheck homework init DIR [--part math|ir|runtime|kernels|all]   the student's starter
stackcheck homework strip --part P [--out FILE]      reference.py without the solutions of P
stackcheck grade SUBMISSIONS --out grades.csv [--part P] [--tests PATH] [--timeout S]
stackcheck merge REPORT.json REPORT.json ... --out matrix.html   one claim x machine matrix
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from stackcheck.homework import assignment, checkpoints
from stackcheck.impl import contract

STUDENT_README = """# Week 02 homework (stackcheck)

Parts: {parts}. Write every function in `homework.py`: its docstring is the whole contract,
the checks it must make included. Answer the checkpoints Q1-Q5 in `answers.toml`.

Grade yourself from the stackcheck checkout (note the `=`):

    python -m pytest --homework={folder}

The run ends with your score and, for each claim of the course, what failed, the course
section to reread and the misconception to revisit. A function you have not written yet is
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
    merge = commands.add_parser("merge", help="several machines' curriculum reports as one claim x machine matrix")
    merge.add_argument("reports", nargs="+", help="curriculum reports (the JSON of --curriculum-report)")
    merge.add_argument("--out", required=True, help="the matrix to write: OUT.html, OUT.md and OUT.json")
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            from stackcheck.report import merge as merging

            written = merging.write(args.reports, args.out)
            print("wrote " + ", ".join(str(p) for p in written))
            return 0
        if args.command == "homework" and args.step == "init":
            return init_homework(Path(args.dir), args.part or ["math"], args.force)
        if args.command == "homework":
            text = assignment.stripped_reference(args.part)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
            return 0
        return grade_all(Path(args.submissions), Path(args.out), args.part, args.tests, args.timeout)
    except (OSError, ValueError) as error:
        print(f"stackcheck: {error}", file=sys.stderr)
        return 2


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


def suite_root() -> Path:
    """The folder holding the test packages (the checkout, or site-packages for an installed suite)."""
    spec = importlib.util.find_spec("tests_math")
    if spec is None or not spec.origin:
        raise ValueError("the stackcheck test folders are not importable; install stackcheck or run from its checkout")
    return Path(spec.origin).resolve().parent.parent


def grade_all(submissions: Path, out: Path, parts: list[str] | None, extra: list[str], timeout: float) -> int:
    folders = sorted(p for p in submissions.iterdir() if (p / "homework.py").is_file()) if submissions.is_dir() else []
    if not folders:
        raise ValueError(f"{submissions}: no submission folders (each needs a homework.py)")
    root = suite_root()
    feedback = out.parent / f"{out.stem}-feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    rows = []
    for folder in folders:
        row = grade_one(folder, root, feedback / folder.name, parts, [str(Path(t).resolve()) for t in extra], timeout)
        rows.append(row)
        print(f"stackcheck grade: {folder.name}: {row['percent']} % ({row['status']})")
    columns = ["student", "percent", "earned", "points", "status"]
    columns += sorted({k for r in rows for k in r} - set(columns))
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"stackcheck grade: {len(rows)} submission(s) -> {out}; feedback in {feedback}/")
    return 0


def grade_one(folder: Path, root: Path, report: Path, parts, extra: list[str], timeout: float) -> dict:
    """One submission in its own pytest process; its row: the total and the points per claim."""
    folder = folder.resolve()
    command = [
        sys.executable,
        "-m",
        "pytest",
        f"--homework={folder}",
        f"--curriculum-report={report}.json",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--rootdir={root}",
        *(f"--homework-part={p}" for p in parts or []),
        *(str(root / folder) for folder in assignment.PARTS.values()),
        *extra,
    ]  # an install has no testpaths
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        report.with_suffix(".md").write_text(f"# {folder.name}\n\nGrading stopped after {timeout:g} s.\n")
        return {"student": folder.name, "percent": 0, "earned": 0, "points": "", "status": f"timed out ({timeout:g} s)"}
    data = None
    if report.with_suffix(".json").exists():
        data = json.loads(report.with_suffix(".json").read_text(encoding="utf-8")).get("homework")
    if data is None:
        error = (done.stderr.strip() or done.stdout.strip()).splitlines()
        report.with_suffix(".md").write_text(
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
    row = {
        "student": folder.name,
        "percent": data["percent"],
        "earned": data["earned"],
        "points": data["points"],
        "status": "graded",
    }
    row.update({c["id"]: c["earned"] for c in data["claims"]})
    row.update({f"checkpoint {q['id']}": q["earned"] for q in data["checkpoints"]})
    return row


if __name__ == "__main__":
    sys.exit(main())
