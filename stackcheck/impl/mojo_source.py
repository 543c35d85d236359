"""A graded submission's Mojo package (§10.4's ``mojo_package``) crosses as its files, never as a
path: the judge reads no path the worker names, and never compiles or runs the student's Mojo
(Mojo's compile-time code runs in its compiler, its kernels in the process that loads them). The
worker reads the folder it returned (regular files only, capped); the judge hands the files to the
launcher, a sandboxed worker of an empty file, which writes them into its own folder and runs one of
the suite's probes (``stackcheck.run.custom_ops``) on them with the judge's inputs. What comes back
is data the judge judges. In a run that is not graded the probe runs here, on the path itself."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

FILES = 64  # files in one package
BYTES = 4 * 1024**2  # their total size
PROBES = "stackcheck.run.custom_ops"  # the only module whose functions the launcher runs on a package


class PackageRefused(ValueError):
    """What the worker returned is not a package it can hand over: the reason, in one line."""


@dataclass(frozen=True, eq=False)
class Shipped:
    """The files of the package a graded submission's ``mojo_package`` returned: data, not a path
    (``os.fspath`` refuses it, so nothing in the judge can compile it by accident)."""

    name: str
    files: tuple[tuple[str, bytes], ...]  # (path inside the package, its bytes)
    owner: object = None  # the judge's Worker whose launcher builds it

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for rel, data in self.files:
            h.update(rel.encode() + b"\0" + data + b"\0")
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<Mojo package {self.name!r} handed in: {len(self.files)} file(s), built only in the launcher>"


def read(value, cwd: str | None = None) -> tuple[str, list[tuple[str, bytes]]]:
    """The worker's side: (name, files) of the folder or file ``value`` names, relative to ``cwd``.
    Links, devices and FIFOs are refused, and so is a package over FILES files or BYTES bytes."""
    try:
        path = Path(os.path.join(cwd or os.getcwd(), os.fspath(value)))
    except TypeError:
        raise PackageRefused(f"mojo_package returned {type(value).__name__}, not a path") from None
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise PackageRefused(f"mojo_package returned {os.fspath(value)!r}: {error.strerror}") from None
    if stat.S_ISREG(mode):
        found = [(path.name, path)]
    elif stat.S_ISDIR(mode):
        found = []
        for folder, dirs, names in os.walk(path, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                found.append((Path(folder, name).relative_to(path).as_posix(), Path(folder, name)))
                if len(found) > FILES:
                    raise PackageRefused(f"mojo_package's folder {path.name!r} holds more than {FILES} files")
    else:
        raise PackageRefused(f"mojo_package returned {os.fspath(value)!r}: not a regular file or a folder")
    if not found:
        raise PackageRefused(f"mojo_package returned {os.fspath(value)!r}: a folder with no files in this worker")
    files, total = [], 0
    for rel, file in found:
        if not stat.S_ISREG(os.lstat(file).st_mode):
            raise PackageRefused(f"mojo_package's {rel!r} is not a regular file (a link, a FIFO or a device)")
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            data = f.read(BYTES + 1 - total)
        total += len(data)
        if total > BYTES:
            raise PackageRefused(f"mojo_package's files are over {BYTES // 1024**2} MB")
        files.append((rel, data))
    return path.name, files


def shipped(name, files, owner=None) -> Shipped:
    """The judge's side: the worker's (name, files), their names checked (relative, no ``..``)."""
    if not isinstance(name, str) or not _plain(name):
        raise ValueError(f"a package name {str(name)[:80]!r}")
    checked = []
    for rel, data in files:
        parts = PurePosixPath(rel).parts if isinstance(rel, str) else ()
        if not parts or "/".join(parts) != rel or not all(_plain(p) for p in parts):
            raise ValueError(f"a file name {str(rel)[:80]!r} inside a package")
        checked.append((rel, bytes(data)))
    if len(checked) > FILES or sum(len(d) for _, d in checked) > BYTES:
        raise ValueError("a package over its caps")
    return Shipped(name, tuple(checked), owner)


def _plain(part: str) -> bool:
    return bool(part) and part not in (".", "..") and "/" not in part and "\0" not in part and len(part) < 200


def written(package: Shipped, folder: Path) -> Path:
    """The launcher's side: ``package`` written under ``folder``; the path to hand MAX."""
    package = shipped(package.name, package.files)
    if len(package.files) == 1 and package.files[0][0] == package.name:  # a single file (a .mojopkg)
        target = folder / package.name
        target.write_bytes(package.files[0][1])
        return target
    root = folder / package.name
    for rel, data in package.files:
        target = root.joinpath(*PurePosixPath(rel).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    root.mkdir(parents=True, exist_ok=True)
    return root


def probe(function, impl, *args):
    """``function(path of impl's package, *args)``, a probe of PROBES: in the launcher where the package
    is a graded submission's (Shipped), else here on its own path, made stable by content. A homework
    package that is the suite's own folder is borrowed (a graded worker never sees that folder)."""
    if function.__module__ != PROBES:
        raise ValueError(f"{function.__module__}.{function.__qualname__} is not one of {PROBES}'s probes")
    package = impl.mojo_package()
    if isinstance(package, Shipped):
        if package.owner is None:
            raise RuntimeError(f"{package!r} has no worker to launch it")
        return package.owner.package_probe(function, package, args)
    from stackcheck.toolchains.mojo_build import stable_package

    if "mojo_package" in (impl.assigned or ()) and _suites_own(package):
        from stackcheck.impl import contract

        raise contract.Borrowed(
            f"borrowed: mojo_package (course §10.4) returned {os.fspath(package)}, the suite's own Mojo; it "
            "earns no points until it is your own work"
        )
    return function(stable_package(package), *args)


def _suites_own(package) -> bool:
    from stackcheck.paths import data

    try:
        return Path(os.fspath(package)).resolve().is_relative_to(data.path("mojo").resolve())
    except (TypeError, OSError):
        return False
