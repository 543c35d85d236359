"""The grader's copy of a submission (``stackcheck grade``): made before its code runs, from regular
files only, bounded, in an area of its own (a sized tmpfs where the grader is root); and removed after
it, whatever the code made there. The grader reads nothing of the copy after the run but through
``read_regular``, and never follows what the submission wrote."""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import tempfile
from pathlib import Path

COPY_BYTES = 16 * 1024**2  # a submission folder, in all: a homework file and its answers are a few KB
COPY_FILES = 200


class Refused(ValueError):
    """A submission folder grading will not copy; the message says why, for its row."""


AREA_BYTES = 4 * 1024**3  # a submission's writable places together (its copy, its caches), where they are sized
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2


def area(place: Path, sized: bool = True) -> Path:
    """``place``, made new for one submission's writable places. Where the grader is root (and
    ``sized``), a tmpfs of AREA_BYTES of its own: what the worker writes there fills that, never the
    disk a neighbour's grading writes to (its pages are the worker's memory cgroup's). Else a folder."""
    remove_area(place)
    place.mkdir(parents=True)
    if sized and os.geteuid() == 0:
        _mount_tmpfs(place)
    return place


def areas_sized() -> bool:
    """Whether ``area`` makes a sized tmpfs here (root, allowed to mount)."""
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory(prefix="stackcheck-area-") as folder:
        if not _mount_tmpfs(Path(folder)):
            return False
        _umount(Path(folder))
    return True


def remove_area(place: Path) -> None:
    """``place`` unmounted (at once, however busy) and removed; it never raises."""
    if os.path.ismount(place):
        _umount(place)
    remove_tree(place)


def _mount_tmpfs(place: Path) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={AREA_BYTES},mode=0755".encode()
    return libc.mount(b"tmpfs", os.fsencode(place), b"tmpfs", MS_NOSUID | MS_NODEV, options) == 0


def _umount(place: Path) -> None:
    ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(place), MNT_DETACH)


def working_copy(folder: Path, under: Path, name: str | None = None) -> Path:
    """A copy of the submission folder to grade, as ``under``/``name`` (default: the folder's name), so
    grading never writes into what was handed in: regular files and folders only (a link, a FIFO or a
    device is refused with its name), at most COPY_FILES files and COPY_BYTES bytes, read without
    following links."""
    target = under / (name or folder.name)
    remove_tree(target)
    target.mkdir(parents=True)
    total, count = 0, 0
    for path, dirs, files in os.walk(folder, followlinks=False):
        here = Path(path)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files) + [d for d in dirs if os.path.islink(here / d)]:
            source = here / name
            relative = source.relative_to(folder)
            info = os.lstat(source)
            if name.endswith(".pyc"):
                continue
            if not stat.S_ISREG(info.st_mode):
                kind = "a link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
                raise Refused(f"{relative}: {kind}; hand in regular files only")
            count, total = count + 1, total + info.st_size
            if count > COPY_FILES or total > COPY_BYTES:
                raise Refused(f"more than {COPY_FILES} files or {COPY_BYTES // 1024**2} MB in the folder")
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise Refused(f"{relative}: not a regular file")
                with os.fdopen(fd, "rb", closefd=False) as src, open(destination, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            finally:
                os.close(fd)
        dirs[:] = [d for d in dirs if not os.path.islink(here / d)]
    return target


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path``, read without following a link or waiting on a FIFO;
    None where there is no such file or it holds more than ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(fd, limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything under it, whatever a submission made there: any depth (no
    recursion, and no path longer than one name: it walks down and back up through '..', with two
    folders open at most), any width (each folder listed once: time in proportion to the entries),
    links removed and never followed, FIFOs and sockets unlinked and never opened, folders made
    unreadable or unwritable opened up first. It never raises; what it cannot remove it leaves."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK
    path = os.path.abspath(path)
    try:
        top = os.open(os.path.dirname(path), flags)
    except OSError:
        return
    names, fd = [os.path.basename(path)], _opened(os.path.basename(path), top, flags)
    pending: list[list[str] | None] = [None]  # per level: its folders still to visit (None: not listed yet)
    try:
        if fd is None:
            _quietly(os.unlink, names[0], dir_fd=top)
            return
        while True:
            if pending[-1] is None:
                pending[-1] = _emptied(fd)
            below = None
            while pending[-1] and below is None:
                folder = pending[-1].pop()
                below = _opened(folder, fd, flags)
                if below is None:
                    _quietly(os.rmdir, folder, dir_fd=fd)  # it does not open: gone if empty, else it stays
            if below is not None:
                os.close(fd)
                fd = below
                names.append(folder)
                pending.append(None)
                continue
            if len(names) == 1:
                os.close(fd)
                fd = None
                _quietly(os.rmdir, names[0], dir_fd=top)
                return
            up = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = up
            pending.pop()
            _quietly(os.rmdir, names.pop(), dir_fd=fd)  # what it cannot remove it leaves
    except OSError:
        pass
    finally:
        for opened in (fd, top):
            if opened is not None:
                _quietly(os.close, opened)


def _emptied(fd: int) -> list[str]:
    """The folder open at ``fd`` listed once: everything but its folders unlinked; its folders' names."""
    try:
        entries = os.listdir(fd)
    except OSError:
        return []
    folders = []
    for entry in entries:
        if _is_folder(entry, fd):
            folders.append(entry)
        else:
            _quietly(os.unlink, entry, dir_fd=fd)
    return folders


def _opened(name: str, dir_fd: int, flags: int) -> int | None:
    """The folder ``name`` in ``dir_fd`` opened (made readable and writable by its owner first where it
    was not), or None: not a folder, or it does not open."""
    try:
        if not stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            return None
        os.chmod(name, 0o700, dir_fd=dir_fd)  # a folder (checked without following): it is itself
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None


def _is_folder(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _quietly(call, *args, **kwargs) -> bool:
    try:
        call(*args, **kwargs)
        return True
    except OSError:
        return False
