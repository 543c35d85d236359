"""What a listing prints, against what the course shows it printing (course §2.2, §8.2-§8.4,
§9.3-§9.6). Both are read as one stream of words and numbers: whitespace and commas only
separate (NumPy prints ``[[-2.  7.]`` where the course writes ``[[-2.0, 7.0],``), words must be
equal, numbers agree within the tolerance policy. A line that starts with one of ``vary`` (a
version, a time) is compared up to that prefix only."""

from __future__ import annotations

import difflib
import re

import numpy as np

from stackcheck.evidence.numerics import mismatch_report, tolerance

# A number standing alone: not the digits of a name (f32, %add.6), not part of a version (2.11.0).
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
SHOWN = 12  # lines of a difference shown


def _lines(text: str, vary: tuple[str, ...]) -> list[str]:
    """``text``'s lines, whitespace collapsed, a line starting with one of ``vary`` cut to that prefix."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return [next((p for p in vary if line.startswith(p)), line) for line in lines if line]


def tokens(text: str, vary: tuple[str, ...] = ()) -> list[str | float]:
    """``text`` as words and numbers, a line starting with one of ``vary`` cut to that prefix."""
    found: list[str | float] = []
    for line in _lines(text, vary):
        at = 0
        for number in NUMBER.finditer(line):
            found += [w for w in re.split(r"[\s,]+", line[at : number.start()]) if w]
            found.append(float(number.group()))
            at = number.end()
        found += [w for w in re.split(r"[\s,]+", line[at:]) if w]
    return found


def differences(shown: str, printed: str, vary: tuple[str, ...] = ()) -> list[str]:
    """Nothing when ``printed`` is what the course ``shown``; else lines saying how they differ."""
    want, got = tokens(shown, vary), tokens(printed, vary)
    words = [t if isinstance(t, str) else "#" for t in want], [t if isinstance(t, str) else "#" for t in got]
    if words[0] != words[1]:
        diff = difflib.unified_diff(
            _lines(shown, vary),
            _lines(printed, vary),
            "the course shows",
            "the listing printed",
            n=0,
            lineterm="",
        )
        lines = [line for line in diff if not line.startswith("@@")]
        return lines[:SHOWN] + ([f"... ({len(lines) - SHOWN} more lines differ)"] if len(lines) > SHOWN else [])
    numbers = [np.array([t for t in ts if not isinstance(t, str)], dtype=np.float64) for ts in (want, got)]
    report = mismatch_report(numbers[1], numbers[0], tolerance("float32", 16))
    return [] if report is None else [f"the printed numbers differ from the course's: {report}"]
