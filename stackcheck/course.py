"""The course as material under test (the CI gate for course materials): its code listings, kept
verbatim in Markdown (``course/week02.md``), collected and run through Sybil.

A fence's info names the listing: ```` ```python {section=8.2 stack=torch device=cpu} ````, plus
``file=NAME`` for a file example (written to the document's folder: Python sees it as
``__file__``, Mojo builds it), ``on_cuda="OLD -> NEW"``, the edit the course tells a GPU reader
to make, and ``on_cuda_prints="LINE"``, the check line a Mojo GPU program prints when it ran right.
A listing with either runs in its CUDA form wherever a GPU is (it is a cuda item there). Python listings share one namespace per document and run in order; a listing whose
chapter's earlier listings have not run in this process (another xdist worker ran them, or ``-m``
deselected them) runs them first. Known errata live in the document's ``<!-- stackcheck ... -->``
TOML block and become strict expected failures. Nothing here imports the plugin.
"""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Region, Sybil
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from stackcheck import data, env, mojo_build

INFO = re.compile(r"(?P<language>python|mojo)[ \t]*\{(?P<attrs>[^}\n]*)\}[ \t]*$\n", re.M)
METADATA = re.compile(r"<!--\s*stackcheck\s*\n(.*?)-->", re.S)
KEYS = {"section", "stack", "device", "file", "on_cuda", "on_cuda_prints"}


class ListingError(AssertionError):
    """A listing of the course failed: its first error line, said once."""


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
    on_cuda_prints: str | None = None  # a GPU program's own check line, read where it runs
    erratum: dict = field(default_factory=dict, compare=False)  # the document's known erratum, if any

    @property
    def id(self) -> str:
        return f"{self.section}-{self.stack}"

    @property
    def chapter(self) -> str:
        return self.section.split(".")[0]

    def describe(self) -> dict:
        return {"id": self.id, "section": self.section, "language": self.language, "stack": self.stack,
                "device": self.device, "file": self.file, "line": self.line,
                "known_erratum": bool(self.erratum), "working_form": self.erratum.get("working_form")}


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
    """The document's ``<!-- stackcheck ... -->`` TOML block (errata), or {}."""
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
        raise ValueError(f"{where}: fence info {{{attrs}}}: unknown {bad or ''} missing {sorted(missing) or ''}; "
                         f"keys: {', '.join(sorted(KEYS))}")
    if info["device"] not in env.DEVICES:
        raise ValueError(f"{where}: device={info['device']!r}; one of {', '.join(env.DEVICES)}")
    return info


def parse(document: Document):
    """Sybil parser: one Region per fenced listing, its Listing as ``parsed``."""
    errata = metadata(document.text).get("errata", {})
    lexer = RawFencedCodeBlockLexer(info_pattern=INFO)
    for region in lexer(document):
        lexemes = region.lexemes
        line = document.text.count("\n", 0, region.start) + 2
        info = parse_info(lexemes["attrs"], f"{document.path}:{line - 1}")
        edit = None
        if "on_cuda" in info:
            old, arrow, new = info["on_cuda"].partition(" -> ")
            if not arrow:
                raise ValueError(f"{document.path}:{line - 1}: on_cuda must read 'OLD -> NEW'")
            edit = (old, new)
        listing = Listing(info["section"], lexemes["language"], info["stack"], info["device"],
                          str(lexemes["source"]), line, info.get("file"), edit, info.get("on_cuda_prints"),
                          errata.get(f"{info['section']}-{info['stack']}", {}))
        yield Region(region.start, region.end, listing, evaluate)


def sybil() -> Sybil:
    return Sybil(parsers=[parse], patterns=["*.md"], path="/", setup=_setup, teardown=_teardown)


def _setup(namespace: dict) -> None:
    namespace["__workdir__"] = Path(tempfile.mkdtemp(prefix="stackcheck-course-"))
    namespace["__ran__"] = {}
    namespace["__notes__"] = {}  # listing id -> how it ran, when not as written (the report says so)


def _teardown(namespace: dict) -> None:
    shutil.rmtree(namespace.get("__workdir__", ""), ignore_errors=True)


# ---- evaluation ---------------------------------------------------------------------------------

def listings_of(document: Document) -> list[Listing]:
    return [region.parsed for _, region in sorted(document.regions, key=lambda pair: pair[0])]


def evaluate(example) -> None:
    """Run one listing, after the earlier listings of its chapter that have not run here."""
    __tracebackhide__ = True
    listing: Listing = example.parsed
    ns = example.namespace
    for earlier in listings_of(example.document):
        if earlier == listing:
            break
        if earlier.chapter == listing.chapter and earlier.id not in ns["__ran__"]:
            try:
                run(earlier, ns, example.path)
            except ListingError as error:
                if not earlier.erratum:
                    raise ListingError(f"listing §{listing.section} needs §{earlier.section} ({earlier.stack}), "
                                       f"which failed: {error}") from None
    run(listing, ns, example.path)


def run(listing: Listing, ns: dict, path: str) -> None:
    __tracebackhide__ = True
    ns["__ran__"][listing.id] = "failed"
    if listing.language == "mojo":
        _build_mojo(listing, ns)
    else:
        _exec_python(listing, ns, path)
    ns["__ran__"][listing.id] = "passed"


def runs_on_cuda(listing: Listing) -> bool:
    """Whether ``listing`` runs in its CUDA form here: it has one, and a GPU is present."""
    has_form = listing.on_cuda is not None or listing.on_cuda_prints is not None
    return has_form and env.device_missing("cuda", "torch") is None


def device_here(listing: Listing) -> str:
    """The device ``listing`` runs on in this environment."""
    return "cuda" if runs_on_cuda(listing) else listing.device


def _exec_python(listing: Listing, ns: dict, path: str) -> None:
    __tracebackhide__ = True
    source = listing.source
    if listing.on_cuda is not None and runs_on_cuda(listing):
        source = source.replace(*listing.on_cuda)
        ns["__notes__"][listing.id] = f"ran with the course's GPU edit: {' -> '.join(listing.on_cuda)}"
    if listing.file:
        target = ns["__workdir__"] / listing.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
        ns["__file__"], ns["__name__"] = str(target), "__main__"
        if ns["__ran__"].get(f"{listing.section}-mojo") == "failed":
            _working_form(ns["__workdir__"] / "kernels")
            ns["__notes__"][listing.id] = f"ran against the working form mojo/study_relu (§{listing.section}'s " \
                                          "Mojo listing fails)"
    code = compile("\n" * (listing.line - 1) + source, path, "exec")  # tracebacks point into the .md
    try:
        exec(code, ns)
    except Exception as error:
        first = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        raise ListingError(f"listing §{listing.section} ({listing.stack}) fails: {first}") from error


def _working_form(kernels: Path) -> None:
    """A file example next to a Mojo listing that failed runs against the suite's working form of
    it (mojo/study_relu), so the Python listing is judged on its own."""
    shutil.rmtree(kernels, ignore_errors=True)
    shutil.copytree(mojo_build.source("study_relu"), kernels)


def _build_mojo(listing: Listing, ns: dict) -> None:
    """A Mojo listing is built: a package folder (``kernels/__init__.mojo``) with ``mojo package``,
    a GPU program to PTX (``mojo build --target-accelerator``), which needs no GPU. Where a GPU is, a
    program with ``on_cuda_prints`` is also built to run, run, and must print that line."""
    __tracebackhide__ = True
    workdir = ns["__workdir__"]
    target = workdir / (listing.file or f"listing_{listing.section}.mojo")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(listing.source, encoding="utf-8")
    mojo = env.mojo_executable()
    if mojo is None:
        raise env.Missing(env.stack_missing("mojo") or "the mojo command is not on PATH", "mojo")
    if target.name == "__init__.mojo":
        args = [mojo, "package", str(target.parent), "-o", str(workdir / f"{target.parent.name}.mojoc")]
    else:
        args = [mojo, "build", "--target-accelerator", mojo_build.TARGET, "--emit", "asm", "-o",
                str(target.with_suffix(".s")), str(target)]
    done = subprocess.run(args, capture_output=True, text=True, cwd=workdir)
    if done.returncode != 0:
        said = first_error(done.stdout + done.stderr).replace(f"{workdir}/", "")  # no temporary folder names
        raise ListingError(f"listing §{listing.section} fails on {mojo_build.toolchain_version()}: {said}")
    if listing.on_cuda_prints is not None and runs_on_cuda(listing):
        _run_on_gpu(listing, target)
        ns["__notes__"][listing.id] = f"built and ran on the GPU; it printed {listing.on_cuda_prints!r}"


def _run_on_gpu(listing: Listing, target: Path) -> None:
    """Build the program to run here, run it, and read its own check line."""
    __tracebackhide__ = True
    try:
        binary = mojo_build.build(target, emit="exe")
    except RuntimeError as error:
        raise ListingError(f"listing §{listing.section} does not build to run here: {first_error(str(error))}") \
            from None
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120,
                          env=mojo_build.runtime_environment())
    printed = [line.strip() for line in done.stdout.splitlines()]
    if done.returncode != 0 or listing.on_cuda_prints not in printed:
        said = first_error(done.stderr + done.stdout) if done.returncode else f"printed {printed[:3]}"
        raise ListingError(f"listing §{listing.section} ran on the GPU (exit {done.returncode}) without printing "
                           f"{listing.on_cuda_prints!r}: {said}")


def first_error(output: str) -> str:
    """The first line of a compiler's output that says error (else its first line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "no output")
