"""CI: what a command left in the temp folder .ci/run gave it (its own $TMPDIR). Every file the
suite makes for a run is the run's to remove, so nothing may be left but the caches meant to stay:
Inductor's (torch puts it there when TORCHINDUCTOR_CACHE_DIR is unset), Modular's Mojo packages
(.modular_UID) and pytest's newest temp folders, none of them still locked. A lock left after
every process ended is a process that skipped its exit handlers (a forked child, a killed run):
pytest keeps that folder three days.

    python3 .ci/temp_left.py FOLDER WHAT     exit 1, naming each thing left, if any
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


if __name__ == "__main__":
    folder, what = Path(sys.argv[1]), sys.argv[2]
    found = left(folder)
    for entry in found:
        print(f"ci: {what} left {entry} in its temp folder", file=sys.stderr)
    sys.exit(1 if found else 0)
