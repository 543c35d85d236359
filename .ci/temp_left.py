"""CI: what a command left in the temp folder .ci/run gave it (its own $TMPDIR). Every file the
suite makes for a run is the run's to remove, so nothing may be left but the caches meant to stay:
Inductor's (torch puts it there when TORCHINDUCTOR_CACHE_DIR is unset), Modular's Mojo packages
(.modular_UID) and pytest's newest temp folders, none of them still locked. A lock left after
every process ended is a process that skipped its exit handlers (a forked child, a killed run):
pytest keeps that folder three days.

    python3 .ci/temp_left.py FOLDER WHAT     exit 1, naming each thing left and what it holds, if any
"""

import sys
from pathlib import Path

CACHES = ("torchinductor_", ".modular_")


def left(folder: Path) -> list[Path]:
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("pytest-of-"):
            found += sorted(d for d in entry.iterdir() if not d.is_symlink() and (d / ".lock").exists())
        elif not entry.name.startswith(CACHES):
            found.append(entry)
    return found


def holding(entry: Path, shown: int = 5) -> str:
    """What ``entry`` holds, for telling whose it is: a folder's first files, by path inside it."""
    if not entry.is_dir() or entry.is_symlink():
        return "a file" if entry.is_file() else "not a folder"
    files = sorted(str(f.relative_to(entry)) for f in entry.rglob("*") if not f.is_dir())
    more = f", and {len(files) - shown} more" if len(files) > shown else ""
    return f"{len(files)} file(s): {', '.join(files[:shown])}{more}" if files else "empty"


if __name__ == "__main__":
    folder, what = Path(sys.argv[1]), sys.argv[2]
    found = left(folder)
    for entry in found:
        print(f"ci: {what} left {entry} in its temp folder ({holding(entry)})", file=sys.stderr)
    sys.exit(1 if found else 0)
