"""``stackcheck watch DIR``: a student's loop in seconds. One warm process imports torch, JAX, Triton
and MAX once (the mutant runs' fork server, stackcheck.claims.mutation); on every save of
``DIR/homework.py`` it reruns, on the CPU, the claim tests that reach the functions the edit changed
(stackcheck.homework.reach), and prints the score line first."""

from __future__ import annotations

import ast
import re
import tempfile
import time
from pathlib import Path

from stackcheck.homework import assignment, reach
from stackcheck.impl.loader import SURFACE

SHOWN = re.compile(r"^(score:|no score|PASS |FAIL |TODO |     (first failure|rerun|not attempted)|---- integrity)")


def functions(path: Path) -> dict[str, str] | None:
    """Each surface function the file defines, as its syntax tree's text (comments and spacing do not
    count as changes); None while the file does not parse."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in SURFACE}


def changed(before: dict[str, str] | None, after: dict[str, str] | None) -> list[str]:
    """The surface functions an edit changed (every one of ``after`` when there is nothing to compare)."""
    if after is None:
        return []
    return sorted(n for n in after if before is None or before.get(n) != after[n])


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


def summary(lines: list[str]) -> list[str]:
    """What a rerun prints: the score and each claim's verdict first (not the checkpoints: an edit of
    the code does not change them), then pytest's count."""
    shown = [line for line in lines if SHOWN.match(line) and " checkpoint " not in line]
    counted = [line for line in lines if re.search(r"\d+ (passed|failed|error)", line)]
    return shown + counted[-1:]


def watch(folder: Path, root: Path, keyword: str | None = None, interval: float = 0.3, runs: int | None = None) -> int:
    """Watch ``folder/homework.py`` until interrupted (or ``runs`` reruns); 0 at the end."""
    from stackcheck.claims.mutation import Runner

    path = folder / "homework.py"
    if not path.is_file():
        raise ValueError(f"{folder}: no homework.py there; `stackcheck homework init {folder}` writes the starter")
    runner = Runner(root, timeout=600.0)
    runner.start()
    seen, stamp, done = functions(path), path.stat().st_mtime_ns, 0
    print(f"stackcheck watch: {path}: save it to rerun the CPU tests of what you changed (Ctrl-C stops)", flush=True)
    with tempfile.TemporaryDirectory(prefix="stackcheck-watch-") as scratch:
        try:
            while runs is None or done < runs:
                time.sleep(interval)
                if path.stat().st_mtime_ns == stamp:
                    continue
                stamp, now = path.stat().st_mtime_ns, functions(path)
                names = changed(seen, now)
                if now is None:
                    print("stackcheck watch: homework.py does not parse yet; waiting for the next save", flush=True)
                    continue
                seen = now
                if not names:
                    continue
                start = time.monotonic()
                result = runner.run(rerun_args(folder.resolve(), names, root, keyword), Path(scratch))
                print(f"---- {', '.join(names)} changed: rerun in {time.monotonic() - start:.1f} s", flush=True)
                for line in summary(result.outlines):
                    print(line, flush=True)
                done += 1
        except KeyboardInterrupt:
            pass
        finally:
            runner.close()
    return 0
