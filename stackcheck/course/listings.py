"""The course as material under test (the CI gate for course materials): its code listings, kept
verbatim in Markdown (``course/week02.md``), collected and run through Sybil.

A fence's info names the listing: ```` ```python {section=8.2 stack=torch device=cpu} ````, plus
``file=NAME`` for a file example (written to the document's folder: Python sees it as
``__file__``, Mojo builds it) and ``on_cuda="OLD -> NEW"``, the edit the course tells a GPU reader
to make. Python listings share one namespace per document and run in order; a listing whose
chapter's earlier listings have not run in this process (another xdist worker ran them, or ``-m``
deselected them) runs them first; a standalone Mojo program needs none. Known errata live in the document's ``<!-- stackcheck ... -->``
TOML block and become strict expected failures. Nothing here imports the plugin.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import tomllib
from sybil import Document, Region, Sybil
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from stackcheck.course import printed
from stackcheck.paths import data
from stackcheck.paths.tools import mojo_executable
from stackcheck.stacks import available, records
from stackcheck.toolchains import mojo_build

INFO = re.compile(r"(?P<language>python|mojo|shell)[ \t]*\{(?P<attrs>[^}\n]*)\}[ \t]*$\n", re.M)
# A shell line the course tells the reader to type (``python run_custom_relu.py``): run in the
# document's folder, after its chapter's listings wrote their files there; its command word is this
# run's own (the interpreter pytest runs on, the mojo it found); any other command is an error.
SHELL_COMMANDS = ("python", "mojo")
# What the course shows a listing printing: a ```text {output} fence right after it; vary="A|B": lines
# starting with A or B (a version, a time) are compared up to that prefix (stackcheck.course.printed).
OUTPUT = re.compile(r"(?P<language>text)[ \t]*\{output(?P<attrs>[^}\n]*)\}[ \t]*$\n", re.M)
METADATA = re.compile(r"<!--\s*stackcheck\s*\n(.*?)-->", re.S)
KEYS = {"section", "stack", "device", "file", "on_cuda"}


class ListingError(AssertionError):
    """A listing of the course failed: its first error line, said once. ``line`` is the document's
    line it failed at (None where no frame of the listing shows, as for a Mojo build), ``text`` that line."""

    line: int | None = None
    text: str = ""


@dataclass(frozen=True)
class Listing:
    section: str
    language: str
    stack: str
    device: str
    source: str
    line: int  # where the code starts in the Markdown file (1-based)
    file: str | None = None
    on_cuda: tuple[str, str] | None = None
    erratum: dict = field(default_factory=dict, compare=False)  # the document's known erratum, if any
    given: str = field(default="", compare=False)  # the gate's preamble for a fragment (the document's [given])
    check: str = field(default="", compare=False)  # the gate's assertions after it, on what it left ([given] check)
    shown: str | None = None  # what the course shows it printing (a ```text {output} fence after it)
    shown_line: int = 0  # where that output starts in the Markdown file
    vary: tuple[str, ...] = ()  # line prefixes compared as prefixes only

    @property
    def id(self) -> str:
        return listing_id(self.section, self.stack, self.language)

    @property
    def chapter(self) -> str:
        return self.section.split(".")[0]

    def describe(self) -> dict:
        return {
            "id": self.id,
            "section": self.section,
            "language": self.language,
            "stack": self.stack,
            "device": self.device,
            "file": self.file,
            "line": self.line,
            "known_erratum": bool(self.erratum),
            "output_compared": self.shown is not None,
            "working_form": self.erratum.get("working_form"),
        }


def listing_id(section: str, stack: str, language: str) -> str:
    """``10.4-max``; a shell line of the section ``10.4-max-shell`` (the file it runs has the first)."""
    return f"{section}-{stack}" + ("-shell" if language == "shell" else "")


def shipped() -> Path:
    """Week 02's listings as shipped with the package."""
    return data.path("course", "week02.md")


def documents(spec: str) -> list[Path]:
    """The Markdown files ``--course`` names: a file, or every ``*.md`` under a folder."""
    path = Path(spec).expanduser()
    if path.is_dir():
        found = sorted(path.rglob("*.md"))
    elif path.is_file() and path.suffix == ".md":
        found = [path]
    else:
        found = []
    if not found:
        raise ValueError(f"--course {spec}: not a Markdown file or a folder holding one")
    return [p.resolve() for p in found]


def metadata(text: str) -> dict:
    """The document's ``<!-- stackcheck ... -->`` TOML block (errata; given: the preamble a fragment of
    the course runs after, by listing id), or {}."""
    found = METADATA.search(text)
    if not found:
        return {}
    try:
        return tomllib.loads(found.group(1))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"the <!-- stackcheck --> block is not TOML: {error}") from None


def parse_info(attrs: str, where: str) -> dict:
    """``section=8.2 stack=torch device=cpu ...`` as a dict; anything else is one clear error."""
    try:
        pairs = [item.split("=", 1) for item in shlex.split(attrs)]
    except ValueError as error:
        raise ValueError(f"{where}: fence info {{{attrs}}}: {error}") from None
    bad = [p[0] for p in pairs if len(p) != 2 or p[0] not in KEYS]
    info = dict(p for p in pairs if len(p) == 2)
    missing = {"section", "stack", "device"} - set(info)
    if bad or missing:
        raise ValueError(
            f"{where}: fence info {{{attrs}}}: unknown {bad or ''} missing {sorted(missing) or ''}; "
            f"keys: {', '.join(sorted(KEYS))}"
        )
    if info["device"] not in records.DEVICES:
        raise ValueError(f"{where}: device={info['device']!r}; one of {', '.join(records.DEVICES)}")
    return info


def _outputs(document: Document) -> list[tuple[int, int, str, tuple[str, ...]]]:
    """The document's output fences: (start, line, text, vary) each."""
    found = []
    for region in RawFencedCodeBlockLexer(info_pattern=OUTPUT)(document):
        line = document.text.count("\n", 0, region.start) + 2
        attrs = dict(item.split("=", 1) for item in shlex.split(region.lexemes["attrs"]) if "=" in item)
        vary = tuple(p for p in attrs.get("vary", "").split("|") if p)
        found.append((region.start, line, str(region.lexemes["source"]), vary))
    return found


def parse(document: Document):
    """Sybil parser: one Region per fenced listing, its Listing as ``parsed``, with the output fence
    that follows it before the next listing, if any."""
    meta = metadata(document.text)
    errata, given = meta.get("errata", {}), meta.get("given", {})
    lexer = RawFencedCodeBlockLexer(info_pattern=INFO)
    regions = list(lexer(document))
    outputs = _outputs(document)
    for at, region in enumerate(regions):
        ends = regions[at + 1].start if at + 1 < len(regions) else len(document.text)
        shown = next((o for o in outputs if region.end <= o[0] < ends), None)
        lexemes = region.lexemes
        line = document.text.count("\n", 0, region.start) + 2
        info = parse_info(lexemes["attrs"], f"{document.path}:{line - 1}")
        edit = None
        if "on_cuda" in info:
            old, arrow, new = info["on_cuda"].partition(" -> ")
            if not arrow:
                raise ValueError(f"{document.path}:{line - 1}: on_cuda must read 'OLD -> NEW'")
            edit = (old, new)
        key = listing_id(info["section"], info["stack"], lexemes["language"])
        listing = Listing(
            info["section"],
            lexemes["language"],
            info["stack"],
            info["device"],
            str(lexemes["source"]),
            line,
            info.get("file"),
            edit,
            errata.get(key, {}),
            given.get(key, {}).get("code", ""),
            given.get(key, {}).get("check", ""),
            shown[2] if shown else None,
            shown[1] if shown else 0,
            shown[3] if shown else (),
        )
        yield Region(region.start, region.end, listing, evaluate)


class _CourseSybil(Sybil):
    def identify(self, example) -> str:
        """A listing's test id: its section, stack and document line (``week02.md::§2.2-numpy:L18``), so
        ``-k 2.2-numpy`` or ``-k 10.4`` selects by section (Sybil's own is ``line:18,column:1``)."""
        listing = example.parsed
        return f"§{listing.id}:L{example.line}"


def sybil() -> Sybil:
    return _CourseSybil(parsers=[parse], patterns=["*.md"], path="/", setup=_setup, teardown=_teardown)


def _setup(namespace: dict) -> None:
    namespace["__workdir__"], namespace["__lock__"] = _workdir()
    namespace["__ran__"] = {}
    namespace["__notes__"] = {}  # listing id -> how it ran, when not as written (the report says so)


def _teardown(namespace: dict) -> None:
    shutil.rmtree(namespace.get("__workdir__", ""), ignore_errors=True)
    if namespace.get("__lock__") is not None:
        namespace["__lock__"].close()


def _workdir():
    """(an empty folder for a document's files, the lock that holds it). MAX caches a compile under
    the paths of its custom extensions, and §10.4's listing names its own folder (``Path(__file__).parent
    / "kernels"``): in a fresh temporary folder each run its custom op compiled cold every time (59 s
    on 2 cores). So the folder is one of a few fixed ones under the user's cache, the first no other
    process holds; a temporary one when all are taken, or the cache cannot be written."""
    root = data.cache_dir() / "course"
    try:
        root.mkdir(parents=True, exist_ok=True)
        for slot in range(8):
            lock = open(root / f"run-{slot}.lock", "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another process holds this one
                lock.close()
                continue
            folder = root / f"run-{slot}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            return folder, lock
    except OSError:  # the cache cannot be written
        pass
    return Path(tempfile.mkdtemp(prefix="stackcheck-course-")), None


# ---- evaluation ---------------------------------------------------------------------------------


def listings_of(document: Document) -> list[Listing]:
    return [region.parsed for _, region in sorted(document.regions, key=lambda pair: pair[0])]


def evaluate(example) -> None:
    """Run one listing, after the earlier listings of its chapter that have not run here."""
    __tracebackhide__ = True
    listing: Listing = example.parsed
    ns = example.namespace
    for earlier in listings_of(example.document) if not standalone(listing) else ():
        if earlier == listing:
            break
        if earlier.chapter == listing.chapter and earlier.id not in ns["__ran__"]:
            try:
                run(earlier, ns, example.path)
            except ListingError as error:
                if not earlier.erratum:
                    raise ListingError(
                        f"listing §{listing.section} needs §{earlier.section} ({earlier.stack}), which failed: {error}"
                    ) from None
    run(listing, ns, example.path)


def standalone(listing: Listing) -> bool:
    """A Mojo program (§10.5's) is built on its own: it needs nothing the chapter's earlier listings
    make (a Mojo package folder, ``kernels/__init__.mojo``, is what a later Python listing needs)."""
    return listing.language == "mojo" and listing.file is not None and not listing.file.endswith("__init__.mojo")


def run(listing: Listing, ns: dict, path: str) -> None:
    __tracebackhide__ = True
    ns["__ran__"][listing.id] = "failed"
    if listing.language == "mojo":
        _build_mojo(listing, ns["__workdir__"])
    elif listing.language == "shell":
        _run_shell(listing, ns)
    else:
        _exec_python(listing, ns, path)
    ns["__ran__"][listing.id] = "passed"


def gpu_edit_applies(listing: Listing) -> bool:
    return listing.on_cuda is not None and available.device_missing("cuda", "torch") is None


def _exec_python(listing: Listing, ns: dict, path: str) -> None:
    __tracebackhide__ = True
    source = listing.source
    if gpu_edit_applies(listing):
        source = source.replace(*listing.on_cuda)
        ns["__notes__"][listing.id] = f"ran with the course's GPU edit: {' -> '.join(listing.on_cuda)}"
    if listing.file:
        target = ns["__workdir__"] / listing.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
        ns["__file__"], ns["__name__"] = str(target), "__main__"
        if ns["__ran__"].get(f"{listing.section}-mojo") == "failed":
            _working_form(ns["__workdir__"] / "kernels")
            ns["__notes__"][listing.id] = (
                f"ran against the working form mojo/study_relu (§{listing.section}'s Mojo listing fails)"
            )
    if listing.given:  # a fragment of the course (§6.5's fn and x): the document supplies what it uses
        exec(compile(listing.given, f"<the gate's preamble for §{listing.section}>", "exec"), ns)
        ns["__notes__"][listing.id] = "ran after the gate's preamble for the names the fragment leaves to the reader"
    code = compile("\n" * (listing.line - 1) + source, path, "exec")  # tracebacks point into the .md
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), _max_temp(listing, ns["__workdir__"]):
            exec(code, ns)
    except Exception as error:
        first = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        failed = ListingError(f"listing §{listing.section} ({listing.stack}) fails: {first}")
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
        if frames:  # the document's line: the code was compiled at the listing's own lines
            failed.line = frames[-1].lineno
            failed.text = (source.splitlines() or [""])[min(failed.line - listing.line, len(source.splitlines()) - 1)]
        raise failed from error
    finally:  # what the listing printed reaches the report, whether or not it failed
        sys.stdout.write(out.getvalue())
    if listing.shown is not None:
        _compare_output(listing, out.getvalue(), ns["__notes__"])
    if listing.check:
        _check_after(listing, ns)


UNUSED_S = 30 * 24 * 3600  # a listing's temporary folder not used for this long is removed


def _max_temp(listing: Listing, workdir: Path):
    """_temp_named_by for a MAX listing; other listings keep Python's temporary folder (torch's
    Inductor, on its first compile, fixes its cache there for the rest of the process)."""
    return _temp_named_by(workdir) if listing.stack == "max" else contextlib.nullcontext()


@contextlib.contextmanager
def _temp_named_by(workdir: Path):
    """Python's temporary folder, while a MAX listing runs, one of the user's cache named by the run's
    folder and the Mojo packages (folders with an ``__init__.mojo``) the listings wrote there. MAX
    precompiles a Mojo package folder (§10.4's ``kernels``) to a file in the temporary folder and
    caches each graph's compile under that file's path: in the new temporary folder ``.ci/run`` gives
    each run, §10.4's graph compiled cold every time (47-51 s here). Named by the packages' sources
    too, a changed listing compiles anew; one unused for a month is removed. A run in a temporary
    folder of its own, or where the cache cannot be written, keeps Python's. Yields the folder (or
    None), a shell listing's ``TMPDIR``."""
    root = data.cache_dir() / "course"
    folder = None
    if workdir.parent == root:
        try:
            digest = hashlib.sha256()
            for package in sorted(init.parent for init in workdir.rglob("__init__.mojo")):
                for f in sorted(p for p in package.rglob("*.mojo")):
                    digest.update(f"{f.relative_to(workdir)}\0".encode() + f.read_bytes() + b"\0")
            folder = root / f"{workdir.name}.tmp" / digest.hexdigest()[:16]
            folder.mkdir(parents=True, exist_ok=True)
            folder.touch()
            for other in folder.parent.iterdir():
                if time.time() - other.stat().st_mtime > UNUSED_S:
                    shutil.rmtree(other, ignore_errors=True)
        except OSError:
            folder = None
    if folder is None:
        yield None
        return
    before = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield str(folder)
    finally:
        tempfile.tempdir = before


def _check_after(listing: Listing, ns: dict) -> None:
    """The document's assertions on what a fragment left in the namespace (§6.5 prints nothing: its
    ``elapsed`` is what it measured), or a ListingError at the listing's line saying which failed."""
    __tracebackhide__ = True
    try:
        exec(compile(listing.check, f"<the gate's check after §{listing.section}>", "exec"), ns)
    except AssertionError as error:
        failed = ListingError(f"listing §{listing.section} ({listing.stack}): the gate's check after it fails: {error}")
        failed.line, failed.text = listing.line, (listing.source.splitlines() or [""])[0]
        raise failed from error
    notes = ns["__notes__"]
    notes[listing.id] = "; ".join(filter(None, [notes.get(listing.id), "what it measured checked after it"]))


def known_part(listing: Listing) -> str | None:
    """The line from which on an erratum is known to print other than the course shows (its
    ``differs_from``): the output is compared up to it, so a new difference fails."""
    return listing.erratum.get("differs_from")


def _split(text: str, cut: str) -> tuple[str, str]:
    """``text`` up to and including its first line starting with ``cut``, and the rest."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip().startswith(cut)), len(lines) - 1)
    return "\n".join(lines[: at + 1]), "\n".join(lines[at + 1 :])


def _compare_output(listing: Listing, said: str, notes: dict) -> None:
    """The listing printed what the course shows it printing, or a ListingError saying how not. With
    a known erratum from a line on (``known_part``), the output up to that line must match, and from
    there it must still differ: a course release that fixes it says so."""
    __tracebackhide__ = True
    shown, cut = listing.shown, known_part(listing)
    if cut:
        (shown, known), (said, said_after) = _split(listing.shown, cut), _split(said, cut)
        if not printed.differences(known, said_after, listing.vary):
            failed = ListingError(
                f"listing §{listing.section} ({listing.stack}): the known erratum from '{cut}' on is gone (it "
                "prints what the course shows): remove it from the document's errata"
            )
            failed.line, failed.text = listing.shown_line, cut
            raise failed
        notes[listing.id] = f"compared up to '{cut}'; from there a known erratum: {listing.erratum.get('reason', '')}"
    differ = printed.differences(shown, said, listing.vary)
    if differ:
        failed = ListingError(
            f"listing §{listing.section} ({listing.stack}) prints other than the course shows:\n" + "\n".join(differ)
        )
        failed.line = listing.shown_line
        failed.text = (listing.shown.splitlines() or [""])[0]
        raise failed


def _working_form(kernels: Path) -> None:
    """A file example next to a Mojo listing that failed runs against the suite's working form of
    it (mojo/study_relu), so the Python listing is judged on its own."""
    shutil.rmtree(kernels, ignore_errors=True)
    shutil.copytree(mojo_build.source("study_relu"), kernels)


def _build_mojo(listing: Listing, workdir: Path) -> None:
    """A Mojo listing is built: a package folder (``kernels/__init__.mojo``) with ``mojo package``,
    a GPU program to PTX (``mojo build --target-accelerator``), which needs no GPU."""
    __tracebackhide__ = True
    target = workdir / (listing.file or f"listing_{listing.section}.mojo")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(listing.source, encoding="utf-8")
    mojo = mojo_executable()
    if mojo is None:
        raise available.Missing(available.stack_missing("mojo") or "the mojo command is not on PATH", "mojo")
    if target.name == "__init__.mojo":
        args = [mojo, "package", str(target.parent), "-o", str(workdir / f"{target.parent.name}.mojoc")]
    else:
        args = [
            mojo,
            "build",
            "--target-accelerator",
            mojo_build.TARGET,
            "--emit",
            "asm",
            "-o",
            str(target.with_suffix(".s")),
            str(target),
        ]
    done = subprocess.run(args, capture_output=True, text=True, cwd=workdir)
    if done.returncode != 0:
        said = first_error(done.stdout + done.stderr).replace(f"{workdir}/", "")  # no temporary folder names
        failed = ListingError(f"listing §{listing.section} fails on {mojo_build.toolchain_version()}: {said}")
        at = re.match(rf"{re.escape(listing.file or target.name)}:(\d+):", said)
        if at:  # the compiler's line in the listing's file is a line of the document
            lines = listing.source.splitlines()
            failed.line = listing.line + int(at.group(1)) - 1
            failed.text = lines[int(at.group(1)) - 1] if int(at.group(1)) <= len(lines) else ""
        raise failed


def _run_shell(listing: Listing, ns: dict) -> None:
    """The course's shell line, in the document's folder, with this run's own ``python`` or ``mojo``;
    what it prints reaches the report and, where the course shows it, is compared."""
    __tracebackhide__ = True
    command = listing.source.strip()
    words = shlex.split(command)
    if len(command.splitlines()) != 1 or not words or words[0] not in SHELL_COMMANDS:
        raise ListingError(
            f"listing §{listing.section} (shell): one command line starting with {' or '.join(SHELL_COMMANDS)}, "
            f"got {command!r}"
        )
    program = sys.executable if words[0] == "python" else mojo_executable()
    if program is None:
        raise available.Missing(available.stack_missing("mojo") or "the mojo command is not on PATH", "mojo")
    note = f"ran as written, with this run's {words[0]} ({program})"
    if ns["__ran__"].get(f"{listing.section}-mojo") == "failed":
        note += f", against the working form mojo/study_relu (§{listing.section}'s Mojo listing fails)"
    ns["__notes__"][listing.id] = note
    with _max_temp(listing, ns["__workdir__"]) as temp:  # the graph the Python listing compiled, found again
        env = {**os.environ, "TMPDIR": temp} if temp else None
        done = subprocess.run(
            [program, *words[1:]], capture_output=True, text=True, cwd=ns["__workdir__"], timeout=900, env=env
        )
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        said = first_error(done.stdout + done.stderr).replace(f"{ns['__workdir__']}/", "")
        failed = ListingError(f"listing §{listing.section} (shell) `{command}` fails: {said}")
        failed.line, failed.text = listing.line, command
        raise failed
    if listing.shown is not None:
        _compare_output(listing, done.stdout, ns["__notes__"])


def first_error(output: str) -> str:
    """The first line of a compiler's output that says error (else its first line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "no output")
