"""Course §14.4: the fifteen things to record with a measurement, so a number can be compared with
someone else's. The environment supplies eight (stackcheck.stacks.fingerprint.fingerprint); the measurement itself
the rest: its inputs (from the seeded draws), whether its clock included the first call, how it
synchronized, whether it included transfers, and the code that ran."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import subprocess
from pathlib import Path

from stackcheck.paths import data

FIELDS = (
    "date",
    "os",
    "cpu",
    "accelerator",
    "driver",
    "python",
    "versions",
    "backend",
    "input_shape",
    "input_dtype",
    "layout",
    "first_call_included",
    "sync",
    "transfers_included",
    "code_revision",
)
SYNC = {
    "host-sync": "synchronize / block_until_ready inside the host clock",
    "device-events": "CUDA events on the stream, the end event synchronized",
    "host-no-sync": "none (host clock around the call only)",
    "first-call": "synchronize / block_until_ready inside the host clock",
    "with-transfers": "the copy back to the host",
    "profiled-kernels": "the profiler's kernel records, the device synchronized after the calls",
}
DRAW = re.compile(r"make_inputs\(N=(\d+), K=(\d+), M=(\d+), dtype='(\w+)'|uniform\(\(([\d, ]*)\)")


@functools.cache
def code_revision() -> str:
    """The checkout's commit, with "+dirty" when it has uncommitted changes; else the installed
    package's version; else the version in a copied checkout's pyproject.toml. A job that runs a copy
    of the tree whose git history is not the tree's (a GPU machine's synced copy) says the commit in
    STACKCHECK_CODE_REVISION."""
    if os.environ.get("STACKCHECK_CODE_REVISION"):
        return os.environ["STACKCHECK_CODE_REVISION"] + " (as the job that copied the tree says)"
    root = data.ROOT
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    if commit is not None and commit.returncode == 0 and (root / ".git").exists():
        return commit.stdout.strip() + ("+dirty" if status.stdout.strip() else "")
    try:
        return f"stackcheck {importlib.metadata.version('stackcheck')} (installed)"
    except importlib.metadata.PackageNotFoundError:
        pass
    found = re.search(r'^version = "([^"]+)"', _read(root / "pyproject.toml"), re.M)
    return f"stackcheck {found.group(1)} (a copy without git)" if found else "unknown"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def regimes_in(value) -> list[str]:
    """Every timing regime named anywhere in an evidence value (Measurement.summary() dicts)."""
    if isinstance(value, dict):
        own = [value["regime"]] if isinstance(value.get("regime"), str) else []
        return own + [r for v in value.values() for r in regimes_in(v)]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in regimes_in(v)]
    return []


def inputs_of(drawn: list[str]) -> tuple[list[str], list[str]]:
    """(shapes, dtypes) of the seeded inputs a test drew (numerics.seeds_drawn's lines)."""
    shapes, dtypes = [], []
    for line in drawn:
        m = DRAW.search(line)
        if m and m.group(1):
            n, k, mm, dtype = m.group(1), m.group(2), m.group(3), m.group(4)
            shapes.append(f"X[{n},{k}] W[{k},{mm}] b[{mm}]")
            dtypes.append(dtype)
        elif m:
            shapes.append(f"[{m.group(5).strip(', ')}]")
            dtypes.append("float32")
    return shapes, sorted(set(dtypes))


def record(environment: dict, evidence: dict, drawn: list[str]) -> dict:
    """The fifteen §14.4 fields for one piece of evidence."""
    regimes = sorted(set(regimes_in(evidence)))
    shapes, dtypes = inputs_of(drawn)
    backends = environment.get("backends")
    return {
        **{k: environment.get(k) for k in ("date", "os", "cpu", "accelerator", "driver", "python", "versions")},
        "backend": backends if backends else "none started",
        "input_shape": shapes or "no seeded input (see the evidence)",
        "input_dtype": dtypes or "n/a",
        "layout": "row-major, contiguous (as drawn and converted)" if shapes else "n/a",
        "first_call_included": "first-call" in regimes,
        "sync": [SYNC[r] for r in regimes] or "n/a (not a timing)",
        "transfers_included": "with-transfers" in regimes,
        "code_revision": code_revision(),
    }


def missing(fields: dict) -> list[str]:
    """The §14.4 fields a record lacks or leaves empty."""
    return [name for name in FIELDS if name not in fields or fields[name] in (None, "", [], {})]
