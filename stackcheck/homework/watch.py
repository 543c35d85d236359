"""``stackcheck watch DIR``: a student's loop in seconds. One warm process imports torch, JAX, Triton
and MAX once (the mutant runs' fork server, stackcheck.claims.mutation); on every save of
``DIR/homework.py`` it reruns, on the CPU, the claim tests that reach the functions the edit changed
(stackcheck.homework.reach), and prints the score line first; a save of ``DIR/answers.toml`` reruns
the whole file (its checkpoints are part of the score). A rerun pytest stops at a usage error shows
as pytest shows it, with no score, as pytest and ``stackcheck grade`` give none."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import re
import tempfile
import time
from pathlib import Path

from stackcheck.claims.results import NotAReport, Report, Score, status_of
from stackcheck.homework import assignment, reach, scoring
from stackcheck.impl.loader import SURFACE

SHOWN = re.compile(
    r"^(score:|no score|PASS |FAIL |TODO |     (first failure|rerun|revisit first|not attempted)|---- integrity)"
)


def functions(path: Path) -> dict[str, str] | None:
    """Each surface function the file defines, as its syntax tree's text (comments and spacing do not
    count as changes); None while the file does not parse."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in SURFACE}


def changed(before: dict[str, str] | None, after: dict[str, str] | None) -> list[str]:
    """The surface functions an edit changed, added or deleted (every one of ``after`` when there is
    nothing to compare)."""
    if after is None:
        return []
    if before is None:
        return sorted(after)
    return sorted(n for n in {*before, *after} if before.get(n) != after.get(n))


def rerun_args(folder: Path, names: list[str], root: Path, keyword: str | None) -> list[str]:
    """The pytest arguments of one rerun: the CPU tests of the assigned parts that reach ``names``."""
    parts = assignment.declared(str(folder / "homework.py")) or ("all",)
    files = reach.test_files(names, root, tuple(assignment.folders(parts)))
    return [
        *files,
        "-m",
        reach.mark_expression(names),
        f"--homework={folder}",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        *(["-k", keyword] if keyword else []),
    ]


def updated(graded: Report | None, newer: Report) -> Report:
    """``graded`` with each test ``newer`` ran replaced by its new result (the whole file's grade so
    far, the tests an edit did not reach as they were); ``newer`` itself where there is nothing yet."""
    if graded is None:
        return newer
    fresh = {t.nodeid: t for _, t in newer.tests()}
    claims = []
    for claim in graded.claims:
        tests = [fresh.pop(t.nodeid, t) for t in claim.tests]
        tests += [t for c, t in newer.tests() if c is not None and c.id == claim.id and t.nodeid in fresh]
        counted = [t for t in tests if t.counts]
        claims.append(dataclasses.replace(claim, tests=tuple(tests), status=status_of(counted)))
    return graded.with_(claims=tuple(claims), homework=newer.homework)


def scored(graded: Report) -> Score:
    """The score of ``graded`` by the one scoring function that pytest --homework and stackcheck grade
    use (scoring.score), with the newest run's checkpoints, rerun command and integrity findings."""
    newest = graded.homework
    if newest is None or newest.no_score is not None:
        return Score(no_score=newest.no_score if newest else "no score: the rerun wrote no homework result")
    result = scoring.score(graded, list(newest.checkpoints))
    return result.with_(rerun=newest.rerun, borrowed=newest.borrowed, answers_problem=newest.answers_problem)


def summary(result: Score, outlines: list[str]) -> list[str]:
    """What a rerun prints: the score and each claim's verdict first (not the checkpoints: an edit of
    the code does not change them), then pytest's count for the rerun."""
    shown = [line for line in scoring.lines(result) if SHOWN.match(line) and " checkpoint " not in line]
    counted = [line for line in outlines if re.search(r"\d+ (passed|failed|error)", line)]
    return shown + counted[-1:]


def unknown_names(path: Path) -> list[str]:
    """Top-level functions of the file that the course does not ask for but nearly spell one it does."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in SURFACE]
    return [f"{n} (did you mean {close[0]}?)" for n in names if (close := difflib.get_close_matches(n, SURFACE, 1))]


def _grade(runner, folder: Path, names: list[str], root: Path, keyword, scratch: Path, graded):
    """Run the CPU tests that reach ``names``; (the whole file's report with their results, the run).
    A run that wrote no report (pytest stopped at a usage error: a misspelt function name) leaves no
    score: (None, the run), as pytest and ``stackcheck grade`` give none."""
    report = scratch / "rerun.json"
    report.unlink(missing_ok=True)
    run = runner.run([*rerun_args(folder.resolve(), names, root, keyword), f"--curriculum-report={report}"], scratch)
    try:
        return updated(graded, Report.load(report)), run
    except NotAReport:
        return None, run


NO_SCORE = "no score: pytest stopped before any test ran (its message above); fix it and save"


def _show(graded: Report | None, run) -> None:
    for line in summary(scored(graded), run.outlines) if graded else [*run.outlines[-5:], NO_SCORE]:
        print(line, flush=True)


def _stamp(path: Path) -> int | None:
    """When ``path`` last changed; None while it does not exist."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def watch(folder: Path, root: Path, keyword: str | None = None, interval: float = 0.3, runs: int | None = None) -> int:
    """Watch ``folder/homework.py`` until interrupted (or ``runs`` reruns); 0 at the end. The whole
    file is graded first; each save reruns what it changed, and the score shown is the whole file's."""
    from stackcheck.claims.mutation import Runner

    path = folder / "homework.py"
    if not path.is_file():
        raise ValueError(f"{folder}: no homework.py there; `stackcheck homework init {folder}` writes the starter")
    runner = Runner(root, timeout=600.0)
    runner.start()
    answers = folder / "answers.toml"  # the checkpoints' part of the score: its edits rerun the file too
    seen, stamp, answered, done, graded = functions(path), path.stat().st_mtime_ns, _stamp(answers), 0, None
    with tempfile.TemporaryDirectory(prefix="stackcheck-watch-") as scratch:
        try:
            if seen:
                start = time.monotonic()
                graded, run = _grade(runner, folder, sorted(seen), root, keyword, Path(scratch), graded)
                print(f"---- the whole file: graded in {time.monotonic() - start:.1f} s", flush=True)
                _show(graded, run)
            print(
                f"stackcheck watch: {path}: save it to rerun the CPU tests of what you changed (Ctrl-C stops)",
                flush=True,
            )
            while runs is None or done < runs:
                time.sleep(interval)
                code, answered_now = path.stat().st_mtime_ns, _stamp(answers)
                if code == stamp and answered_now == answered:
                    continue
                newer_answers, newer_code = answered_now != answered, code != stamp
                stamp, answered, now = code, answered_now, functions(path)
                if now is None:
                    print("stackcheck watch: homework.py does not parse yet; waiting for the next save", flush=True)
                    seen = None  # once it parses again, every function reruns
                    continue
                # new answers, or no score yet (a usage error): the whole file, else what the edit changed
                names = sorted(now) if newer_answers or graded is None else changed(seen, now)
                seen = now
                for name in unknown_names(path):
                    print(f"stackcheck watch: {name} is no function the course asks for", flush=True)
                if not names:
                    continue
                start = time.monotonic()
                graded, run = _grade(runner, folder, names, root, keyword, Path(scratch), graded)
                why = "answers.toml" if newer_answers and not newer_code else ", ".join(names)
                print(f"---- {why} changed: rerun in {time.monotonic() - start:.1f} s", flush=True)
                _show(graded, run)
                done += 1
        except KeyboardInterrupt:
            pass
        finally:
            runner.close()
    return 0
