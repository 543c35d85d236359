"""A submission's folder name is data (issue 74, item 4): any bytes, any length, any script (an LMS
export's 250-byte names, a Korean Windows zip's CP949 bytes unpacked on Linux, ``=2+3``). It is
shown, escaped, as the student's id, and it names files only through ``stems``: a plain name keeps
its files' names; any other gets a slug and a digest of its bytes, which no plain name can spell
and no two names share; every CSV cell is safe for spreadsheets (OWASP's CSV-injection rules).
"""

from __future__ import annotations

import hashlib
import os
import re

PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # a name that is its own file stem: no '.', no '~'
SHOWN_CHARS = 80  # a display name's length at most, its digest included
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")  # a cell a spreadsheet would read as a formula
CELL_CHARS = 2000  # a cell's text at most: what a submission says (its answers, a last line) is capped


def raw(name: str) -> bytes:
    """The name's bytes as the filesystem holds them (undecodable bytes came in as surrogates)."""
    return os.fsencode(name)


def digest(name: str) -> str:
    return hashlib.sha256(raw(name)).hexdigest()[:16]


def display(name: str) -> str:
    """The student's id as printed and in the CSV: the name decoded as UTF-8 where it is, other bytes
    as ``\\xNN``, what Python does not call printable (controls, format characters, separators other
    than the space) and a backslash escaped (two names never show alike);
    a longer one is cut and ends in its digest."""
    text = raw(name).replace(b"\\", b"\\\\").decode("utf-8", errors="backslashreplace")
    shown = "".join(c if c == " " or c.isprintable() else _escaped(c) for c in text)
    if len(shown) > SHOWN_CHARS:
        shown = f"{shown[: SHOWN_CHARS - 18]}…{digest(name)}"
    return shown


def _escaped(c: str) -> str:
    """``\\uNNNN`` (or ``\\UNNNNNNNN``): never the ``\\xNN`` of an undecodable byte."""
    return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"


def stems(names: list[str]) -> dict[str, str]:
    """Each name's file stem: the name itself where it is plain and no other name's stem equals it
    when case is ignored (a case-insensitive disk would join them); else an ASCII slug of it, '~'
    and the digest of its bytes."""
    plain = [n for n in names if PLAIN.fullmatch(n)]
    folded = [n.casefold() for n in plain]
    found = {}
    for name in names:
        if name in plain and folded.count(name.casefold()) == 1:
            found[name] = name
        else:
            slug = re.sub(r"[^A-Za-z0-9_-]+", "_", raw(name).decode("ascii", errors="replace"))[:40].strip("_")
            found[name] = f"{slug or 'submission'}~{digest(name)}"
    return found


def printable(text: str) -> str:
    """``text`` with what a terminal or a spreadsheet would act on (escape sequences, carriage returns,
    controls and format characters) escaped as ``\\uNNNN``; line breaks and tabs kept."""
    return "".join(c if c in "\n\t " or c.isprintable() else _escaped(c) for c in text)


def cell(value):
    """A CSV cell a spreadsheet shows as text: what would act (``printable``) escaped, a string starting
    as a formula would (OWASP: =, +, -, @, tab, carriage return) with a leading apostrophe; a longer one
    than CELL_CHARS is cut, saying so."""
    if not isinstance(value, str):
        return value
    value = printable(value)
    if len(value) > CELL_CHARS:
        value = value[: CELL_CHARS - 20] + f" [... {len(value)} chars]"
    return "'" + value if value.startswith(FORMULA_START) else value
