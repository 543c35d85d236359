"""The worker's view of the filesystem is built up from nothing (issue 74, item 1): every mount it has is
one the sandbox named (the system's programs and libraries, a few files of /etc, the Python and its
import path, its copy, caches, /tmp, /dev/shm), and a secret planted anywhere else on the host, of any
mode and kind (a file, a folder, a unix socket, a second checkout of the suite), does not exist there,
even to a submission that knows its path."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.grading import sandbox
from stackcheck.paths import data

pytestmark = [pytest.mark.meta, pytest.mark.usefixtures("bubblewrap")]

MOUNTS = "print(sorted({line.split()[4] for line in open('/proc/self/mountinfo')}))"


def allowed_mounts(jail: sandbox.Jail, workdir: Path) -> set[str]:
    """Every mount point the sandbox names for ``jail``: what the view is built from."""
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, *filter(None, sys.path), *map(str, jail.readable)}
    named = {"/", "/dev", "/proc", "/dev/shm", str(sandbox.TMP), str(jail.inside or workdir)}
    named |= {p for p in sandbox.SYSTEM_READ} | {f"/etc/{n}" for n in (*sandbox.ETC_READ, *sandbox.identity())}
    named |= {str(part) for p in python for part in sandbox._needed(Path(p))} | {str(t) for _, t in jail.replaced}
    named |= {str(h) for h in jail.hidden} | ({str(sandbox.CACHE)} if jail.cache else set())
    return named


def test_every_mount_of_the_workers_view_is_one_the_sandbox_names(tmp_path):
    """Read from inside: /proc/self/mountinfo lists each mount point; /dev's own (pts, mqueue, shm) and
    /proc's are the kernel's parts of those two."""
    work, hidden = tmp_path / "work", data.ROOT / ".git"
    work.mkdir()
    jail = sandbox.Jail(readable=(data.ROOT,), hidden=(hidden,), inside=sandbox.INSIDE)
    done = sandbox.run([sys.executable, "-I", "-c", MOUNTS], work, sandbox.Limits(wall_s=60), jail)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = eval(done.stdout)  # a printed list of paths
    allowed = allowed_mounts(jail, work)
    odd = [p for p in seen if p not in allowed and not p.startswith(("/dev/", "/proc/"))]
    assert not odd, f"mounts the sandbox never named: {odd}"
    assert "/" in seen and str(sandbox.INSIDE) in seen


def places() -> list[Path]:
    """Folders of this host outside everything a worker is shown: homes, /run, /var, /opt, /srv, /mnt,
    /, /etc and beside the checkout (where a second clone sits)."""
    found = [Path.home(), Path("/root"), Path("/home"), Path("/var/tmp"), Path("/opt"), Path("/srv"), Path("/mnt")]
    found += [Path("/run"), Path("/"), Path("/etc"), data.ROOT.parent]
    return [p for p in dict.fromkeys(found) if p.is_dir() and os.access(p, os.W_OK)]


def plant(where: Path, kind: str, mode: int) -> tuple[Path, object]:
    """A secret of ``kind`` at a new name in ``where``: (its path, what to close or remove after)."""
    path = where / f".stackcheck-planted-{uuid.uuid4().hex[:12]}"
    if kind == "file":
        path.write_text("SECRET")
        path.chmod(mode)
        return path, path
    if kind == "folder":
        path.mkdir()
        (path / "inside.txt").write_text("SECRET")
        path.chmod(mode | 0o100)
        return path, path
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(1)
        path.chmod(mode)
        return path, server
    (path / "stackcheck" / "paths").mkdir(parents=True)  # a second checkout of the suite, with its key
    (path / "stackcheck" / "paths" / "data.py").write_text("")
    (path / "fixtures").mkdir()
    (path / "fixtures" / "checkpoint_key.toml").write_text("[Q1]\nSECRET = 1\n")
    return path / "fixtures" / "checkpoint_key.toml", path


FINDS = """
import os, socket
path = {path!r}
found = []
if os.path.lexists(path):
    found.append("exists")
    try:
        found.append(open(path).read()[:20] if os.path.isfile(path) else os.listdir(path))
    except OSError:
        pass
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        found.append("connected")
    except OSError:
        pass
print(found)
"""


@given(
    where=st.integers(min_value=0, max_value=50),
    kind=st.sampled_from(["file", "folder", "socket", "checkout"]),
    mode=st.sampled_from([0o600, 0o644, 0o400, 0o000, 0o666]),
)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_secret_planted_anywhere_else_on_the_host_is_not_there(tmp_path, where, kind, mode):
    """The submission knows the path; a worker of any uid finds nothing there."""
    candidates = places()
    if not candidates:
        pytest.skip("no folder outside the worker's view is writable here")
    path, made = plant(candidates[where % len(candidates)], kind, mode)
    work = tmp_path / f"work-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    try:
        jail = sandbox.Jail(readable=(data.ROOT,), inside=sandbox.INSIDE)
        done = sandbox.run([sys.executable, "-I", "-c", FINDS.format(path=str(path))], work, sandbox.Limits(30), jail)
    finally:
        if isinstance(made, socket.socket):
            made.close()
            os.unlink(path)
        elif Path(made).is_dir():
            shutil.rmtree(made)
        else:
            Path(made).unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"{kind} at {path}: {done.stdout.strip()}"


READS = """
import os
said = []
for pid in sorted((p for p in os.listdir('/proc') if p.isdigit()), key=int):
    for name in ('cmdline', 'environ', 'mountinfo'):
        try:
            with open(f'/proc/{pid}/{name}', 'rb') as f:
                said.append(f.read().decode('utf-8', 'replace'))
        except OSError:
            pass
print('\\n'.join(said))
"""


@given(depth=st.integers(min_value=0, max_value=3), name=st.text("abcdefgh_-", min_size=1, max_size=12))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_what_the_worker_reads_of_its_processes_names_nothing_hidden_and_no_place_of_the_graders(tmp_path, depth, name):
    """A determined student's find: bwrap is process 1 of the worker's PID namespace, and its command line
    named every mount's source and every cover (an instructor's hidden test kept in the checkout, the
    judge's private folder, the grader's home). Read from inside (every process's command line, environment
    and mount table), none of them is there: bwrap's options come through a descriptor, the files it is
    given as bytes, and of a checkout only its package and data are shown."""
    marker = uuid.uuid4().hex[:12]
    folder = data.ROOT.joinpath(*[f"{name}-{marker}-{i}" for i in range(depth)]) if depth else data.ROOT
    hidden = folder / f"test_hidden_{marker}.py"
    private = tmp_path / f"private-{marker}"
    private.mkdir()
    replaced = private / "reference.py"
    replaced.write_text("stripped = True\n")
    work = tmp_path / f"work-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    folder.mkdir(parents=True, exist_ok=True)
    hidden.write_text("def test_hidden(): pass\n")
    try:
        jail = sandbox.Jail(
            readable=(data.ROOT,),
            hidden=(hidden, private),
            replaced=((replaced, data.ROOT / "stackcheck" / "impl" / "reference.py"),),
            inside=sandbox.INSIDE,
        )
        done = sandbox.run([sys.executable, "-I", "-c", READS], work, sandbox.Limits(wall_s=60), jail)
    finally:
        hidden.unlink()
        if depth:
            shutil.rmtree(data.ROOT / folder.relative_to(data.ROOT).parts[0])
    assert done.returncode == 0, done.stderr[-2000:]
    found = [m for m in (marker, "sandbox-etc", "--ro-bind", "--tmpfs") if m in done.stdout]
    assert not found, f"the worker read {found} of its processes: {done.stdout[:3000]}"
