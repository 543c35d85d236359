"""Building the suite's Mojo programs, cached by source hash and toolchain version (course §10.5).

``kernel_ptx(source, ...)`` works on any machine: ``mojo build --target-accelerator nvidia:90 --emit
asm`` writes the GPU kernel's PTX beside the host assembly (the inspection claims read sm_90's).
``build(source, emit="exe")`` builds a binary for the GPU this machine has (``local_target``: its
compute capability, from the device profile), nvidia:90 where there is none. A GPU machine without
the Mojo toolchain runs binaries built elsewhere: ``--mojo-prebuilt DIR`` points at a folder made by
``python -m stackcheck.mojo_build DIR [nvidia:CC]``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from stackcheck.evidence import device_profile
from stackcheck.evidence.timing import Measurement
from stackcheck.paths import data
from stackcheck.paths.tools import mojo_executable

TARGET = "nvidia:90"  # what the PTX inspection reads, on any machine
TARGETS = ("nvidia:75", "nvidia:80", "nvidia:86", "nvidia:89", "nvidia:90")  # what a learner's GPU may be
RUNTIME_LIBS = (
    "libKGENCompilerRTShared.so",
    "libAsyncRTMojoBindings.so",
    "libMSupportGlobals.so",
    "libAsyncRTRuntimeGlobals.so",
)
# Sizes the GPU program is built and run at: none is a multiple of its 256-thread block.
GPU_SIZES = ({"N": 33, "M": 65}, {"N": 1, "M": 1}, {"N": 17, "M": 513})
QUEUE_PROGRAM = "device_context_order"  # §10.5's queue: order, synchronize(), a stale host copy
QUEUE_ROUNDS = 20  # its pairs (X * 2, X + 1): every element ends at 2^20 - 1, exact in float32
BLOCKS_PROGRAM = "bias_relu_blocks"  # §10.5's bias_relu at six block sizes and four element counts


def source(name: str) -> Path:
    found = data.path("mojo", name)
    if not found.exists():
        raise FileNotFoundError(f"Mojo source {name} is not in this installation")
    return found


def cache_root() -> Path:
    return data.cache_dir() / "mojo"


def toolchain_version() -> str:

    out = subprocess.run([mojo_executable(), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _defines(sizes: dict[str, int]) -> list[str]:
    return [f"-D{k}={v}" for k, v in sorted(sizes.items())]


def local_target() -> str:
    """``nvidia:<compute capability>`` of this machine's GPU; nvidia:90 without one."""
    profile = device_profile.current()
    return f"nvidia:{profile.sm.removeprefix('sm_')}" if profile else TARGET


def build_key(src: Path, emit: str, target: str, sizes: dict[str, int]) -> str:
    """What a build's product depends on: the source, what is emitted, for which GPU, at which sizes,
    by which compiler; for an executable also where that compiler is installed, since the program
    finds Mojo's runtime libraries there (its RUNPATH): a program built by a venv since removed
    would not start."""
    toolchain = [toolchain_version()]
    if emit == "exe":
        toolchain.append(os.path.realpath(mojo_executable()))
    return hashlib.sha256(
        src.read_bytes() + repr((emit, target, sorted(sizes.items()), *toolchain)).encode()
    ).hexdigest()[:16]


def build(src: Path, *, emit: str, sizes: dict[str, int] | None = None, target: str | None = None) -> Path:
    """Build ``src`` (emit 'asm', 'llvm' (unoptimized LLVM IR) or 'exe') for the GPU ``target``
    (default: nvidia:90 for asm and llvm, this machine's GPU for an executable); reuse the cached
    product when nothing it depends on changed (``build_key``)."""

    sizes = sizes or {}
    target = target or (local_target() if emit == "exe" else TARGET)
    key = build_key(src, emit, target, sizes)
    folder = cache_root() / f"{src.stem}-{key}"
    product = folder / (src.stem + {"asm": ".s", "llvm": ".ll", "exe": ""}[emit])
    if product.exists():
        return product
    staging = _staging(folder)
    args = [
        mojo_executable(),
        "build",
        *_defines(sizes),
        "--target-accelerator",
        target,
        *(["--emit", emit] if emit != "exe" else []),
        "-o",
        str(staging / product.name),
        str(src),
    ]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    _publish(staging, folder)
    return product


def _staging(folder: Path) -> Path:
    """A new empty folder beside ``folder``, of this caller alone (another thread's or process's
    build of the same key has its own), readable by all as a plain folder is."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.tmp", dir=folder.parent))
    staging.chmod(0o755)
    return staging


def _publish(staging: Path, folder: Path) -> None:
    """Move a finished ``staging`` folder to ``folder`` in one step; where another process got there
    first, its copy (of the same key) stays and ours goes."""
    try:
        staging.rename(folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)


def stable_package(package: Path) -> Path:
    """``package`` (a Mojo source folder, or a file: a built ``.mojoc``) as a file of the user's cache
    named by its content and the toolchain: a folder precompiled there once (``mojo precompile``, as
    MAX does), a file copied. Two reasons:
    - MAX caches a graph's compile under the paths of its custom extensions, so the same package from a
      new checkout, a grader's copy or a temporary folder compiled again (a fresh clone ran the MAX
      tests in 222 s against 52 s); at one path per content it compiles once per machine;
    - MAX handed a source folder precompiles it at every graph, op library and session compile, each
      process to one temporary file per folder path that it replaces: two xdist workers compiling
      graphs of one package failed one with "could not lower LIT to KGEN: No such file or directory"
      (a clean clone's CI run, 2026-12-05). A published package is never replaced.
    A precompiled folder's module is named by its content too (``study_relu_<hash>``), as MAX names
    the ones it builds, so a mutant's package and the suite's never share a name in one process. What
    is not a file or a folder is handed back as it is, for MAX to say what is wrong; so is a package
    that does not precompile (MAX's error names the line) or where the cache cannot be written."""
    package = Path(package)
    if package.is_dir():
        files = sorted(f for f in package.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    elif package.is_file():
        files = [package]
    else:
        return package
    digest = hashlib.sha256(_toolchain_key().encode() + b"\0")
    for f in files:
        digest.update(f"{f.relative_to(package) if f != package else f.name}\0".encode() + f.read_bytes() + b"\0")
    key = digest.hexdigest()[:16]
    name = f"{package.stem}_{key}.mojoc" if package.is_dir() else package.name  # a file keeps its module's name
    folder = cache_root() / "packages" / f"{package.name}-{key}"
    if (folder / name).is_file():
        return folder / name
    try:
        staging = _staging(folder)
    except OSError:
        return package
    try:
        if package.is_dir():
            _precompile(package, staging / name)
        else:
            shutil.copy2(package, staging / name)
        _publish(staging, folder)
    except (ImportError, OSError, RuntimeError, subprocess.TimeoutExpired):
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already where it was published
    return folder / name if (folder / name).is_file() else package


def _precompile(package: Path, out: Path) -> None:
    """``mojo precompile`` of source folder ``package`` to ``out``, by the compiler MAX runs."""
    from mojo.run import subprocess_run_mojo

    done = subprocess_run_mojo(
        ["precompile", str(package), "-o", str(out)], capture_output=True, text=True, timeout=600
    )
    if done.returncode or not out.is_file():
        raise RuntimeError(f"mojo precompile {package} failed:\n{done.stderr}")


@functools.cache
def _toolchain_key() -> str:
    """What a precompiled package depends on besides its files: the Mojo compiler MAX runs and MAX's
    own Mojo libraries (``max``, which a custom op imports); "none" where there is no compiler, and a
    folder then goes to MAX as it is."""
    from importlib import metadata

    try:
        from mojo.run import subprocess_run_mojo

        version = subprocess_run_mojo(["--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (ImportError, OSError, RuntimeError, subprocess.TimeoutExpired):
        return "none"
    libraries = []
    for dist in ("max", "max-mojo-libs"):
        try:
            libraries.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    return " | ".join([version or "none", *libraries])


def runtime_environment(libs: Path | None = None) -> dict[str, str]:
    """The environment a built Mojo GPU program runs in: this process's, with the runtime libraries
    (``libs``, default the installed Modular ones) on LD_LIBRARY_PATH."""
    import importlib.util

    libs = libs or Path(importlib.util.find_spec("modular").submodule_search_locations[0]) / "lib"
    return dict(os.environ, LD_LIBRARY_PATH=f"{libs}:{os.environ.get('LD_LIBRARY_PATH', '')}")


def kernel_ptx(src: Path, kernel: str, sizes: dict[str, int] | None = None) -> str:
    """The PTX of one GPU kernel of ``src`` (mojo writes it beside the host assembly)."""
    host = build(src, emit="asm", sizes=sizes)
    found = sorted(host.parent.glob(f"*_{kernel}_*.ptx"))
    if not found:
        raise FileNotFoundError(f"no PTX for kernel {kernel!r} next to {host}: {os.listdir(host.parent)}")
    return found[0].read_text()


def guard_problems(ptx: str, element_count: int) -> list[str]:
    """Why the PTX does not bounds-check every global load and store against element_count.

    The guard is a `setp` comparing the thread's index with the bound, then a branch past the
    body: `gt` element_count - 1 or `ge` element_count (for one element the compiler writes `ne 0`)."""
    bounds = {("gt", element_count - 1), ("ge", element_count), ("hi", element_count - 1), ("hs", element_count)}
    if element_count == 1:
        bounds.add(("ne", 0))
    guard = None
    for m in re.finditer(r"setp\.(\w+)\.[usb](?:32|64)\s+(%p\d+),\s*%\w+,\s*(\d+);\s*@\2 bra\s+(\$\w+);", ptx):
        if (m.group(1), int(m.group(3))) in bounds:
            guard = m
            break
    if guard is None:
        return [f"no `setp` against element_count - 1 = {element_count - 1} followed by a branch past the body"]
    body = ptx[guard.end() : ptx.index(guard.group(4) + ":")]
    problems = []
    if not re.search(r"\bst\.global", body):
        problems.append("the guarded body has no st.global: the store is not behind the bounds check")
    if re.search(r"\b(?:ld|st)\.global", ptx[: guard.start()]):
        problems.append("a global load or store comes before the bounds check")
    return problems


def prebuild(
    folder: Path, sizes_list: list[dict[str, int]], programs: dict[str, Path] | None = None, target: str = TARGET
) -> None:
    """Write executables for the GPU ``target``, for each size set, the queue program and each of ``programs`` (name ->
    source) under its name, plus the Mojo runtime libraries, into ``folder``."""
    import importlib.util

    folder.mkdir(parents=True, exist_ok=True)
    src = source("bias_relu_gpu.mojo")
    for sizes in sizes_list:
        exe = build(src, emit="exe", sizes=sizes, target=target)
        shutil.copy2(exe, folder / prebuilt_name(sizes))
    shutil.copy2(build_queue(target=target), folder / QUEUE_PROGRAM)
    shutil.copy2(build_blocks(target=target), folder / BLOCKS_PROGRAM)
    for name, program in (programs or {}).items():
        shutil.copy2(build(program, emit="exe", target=target), folder / name)
    lib = Path(importlib.util.find_spec("modular").submodule_search_locations[0]) / "lib"
    for name in RUNTIME_LIBS:
        shutil.copy2(lib / name, folder / name)
    (folder / TARGET_FILE).write_text(target + "\n", encoding="utf-8")


TARGET_FILE = "TARGET"  # in a prebuilt folder: the GPU its programs were built for ("nvidia:75")


def target_of(capability: tuple[int, int]) -> str:
    """Mojo's accelerator target for a GPU of compute ``capability``: (7, 5) -> "nvidia:75"."""
    return f"nvidia:{capability[0]}{capability[1]}"


def prebuilt_misfit(folder: Path, capability: tuple[int, int] | None) -> str | None:
    """Why the programs in ``folder`` cannot run on a GPU of ``capability`` (None where they can, or
    where no GPU is known): built for another GPU, or by a builder that did not say for which."""
    if capability is None:
        return None
    here = target_of(capability)
    try:
        built = (folder / TARGET_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        built = None
    if built == here:
        return None
    said = f"built for {built}" if built else f"without a {TARGET_FILE} file saying for which GPU"
    return (
        f"--mojo-prebuilt {folder}: its programs were {said}, and this GPU is {here}; build them for it on a "
        f"machine with Mojo: python -m stackcheck.mojo_build {folder} {here}"
    )


def build_queue(src: Path | None = None, target: str | None = None) -> Path:
    """mojo/device_context_order.mojo (or ``src``, a copy of it) built with its QUEUE_ROUNDS."""
    return build(src or source(QUEUE_PROGRAM + ".mojo"), emit="exe", sizes={"ROUNDS": QUEUE_ROUNDS}, target=target)


def build_blocks(src: Path | None = None, target: str | None = None) -> Path:
    """mojo/bias_relu_blocks.mojo (or ``src``, a copy of it)."""
    return build(src or source(BLOCKS_PROGRAM + ".mojo"), emit="exe", target=target)


def run_program(find, name: str, build_here) -> list[list[str]]:
    """Run the GPU program ``name``, as ``find(name, build_here)`` finds it (the mojo_program
    fixture): the words of each line it prints."""
    program, env = find(name, build_here)
    done = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{program.name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return [line.split() for line in done.stdout.splitlines()]


def block_sweep(find) -> tuple[list[dict], dict[int, dict[int, Measurement]]]:
    """Run mojo/bias_relu_blocks.mojo: its checks ({elements, block, mismatches}, ints) and its
    timings, a host-sync series of seconds per launch for each element count and block size."""
    checks, series = [], {}
    for words in run_program(find, BLOCKS_PROGRAM, build_blocks):
        if words[:1] in (["check"], ["time"]):
            line = {k: int(v) for k, v in zip(words[1::2], words[2::2], strict=True)}
            if words[0] == "check":
                checks.append(line)
            else:
                by_block = series.setdefault(line["elements"], {})
                block = line["block"]
                by_block.setdefault(block, Measurement(f"block {block}", "host-sync")).samples.append(
                    line["ns_per_launch"] / 1e9
                )
    if not checks or not series:
        raise RuntimeError(f"{BLOCKS_PROGRAM} printed no check or no timing: {checks}, {series}")
    return checks, series


def queue_trials(find) -> list[dict]:
    """Run mojo/device_context_order.mojo, as ``find(name, build_here)`` finds it (the mojo_program
    fixture), and read its trial lines (see stackcheck.evidence.device_queue for the fields)."""
    trials = []
    for words in run_program(find, QUEUE_PROGRAM, build_queue):
        if words[:1] == ["trial"]:
            fields = dict(zip(words[2::2], words[3::2], strict=True))
            trials.append(
                {
                    "slept": fields["slept"] == "True",
                    **{k: float(fields[k]) for k in ("before_sync", "after_sync_min", "after_sync_max")},
                    "sync_wait_ns": int(fields["sync_wait_ns"]),
                }
            )
    if not trials:
        raise RuntimeError(f"{QUEUE_PROGRAM} printed no trial")
    return trials


COURSE_RESIZED = {"N": 33, "M": 65}  # §10.5's program at 2145 elements: 159 threads of its last block past the end


def resized(source: str, sizes: dict[str, int]) -> str:
    """The course's §10.5 program with its ``comptime N`` and ``M`` set to ``sizes`` (nothing else changed)."""
    for name, value in sizes.items():
        source, count = re.subn(rf"^comptime {name} = \d+$", f"comptime {name} = {value}", source, flags=re.M)
        if count != 1:
            raise ValueError(f"the §10.5 program has {count} lines 'comptime {name} = ...', not one")
    return source


def resized_name(sizes: dict[str, int]) -> str:
    return listing_program_name("10.5") + "_" + "_".join(f"{k}{v}" for k, v in sorted(sizes.items()))


def runtime_failure(done: subprocess.CompletedProcess) -> dict:
    """§10.5: a program built with its GPU branch chosen at compile time, run with no GPU visible,
    failed at run time (a non-zero exit and an error), not by its "No compatible GPU found" branch."""
    found = {"exit": done.returncode, "stdout": done.stdout[-300:], "stderr": done.stderr[-600:]}
    assert "No compatible GPU found" not in done.stdout, f"the compile-time branch ran, not the GPU path: {found}"
    assert done.returncode != 0 and "bias_relu check passed" not in done.stdout, (
        f"with no GPU visible the program built for one must fail at run time: {found}"
    )
    return found


def prebuilt_name(sizes: dict[str, int]) -> str:
    return "bias_relu_gpu_" + "_".join(f"{k}{v}" for k, v in sorted(sizes.items()))


def main(argv: list[str], programs=None) -> int:
    """``python -m stackcheck.mojo_build DIR [nvidia:CC]``: build the GPU programs for that GPU
    (default: this machine's GPU, else nvidia:90, an H100/H200) into DIR, with a TARGET file naming it,
    and those ``programs(scratch)`` writes into a scratch folder (name -> source), once DIR is known."""
    import tempfile

    if len(argv) not in (1, 2) or (len(argv) == 2 and not re.fullmatch(r"nvidia:\d{2,3}a?", argv[1])):
        print(
            "usage: python -m stackcheck.mojo_build DIR [nvidia:CC]  (CC: the GPU compute capability, e.g. nvidia:75)",
            file=sys.stderr,
        )
        return 2
    target = argv[1] if len(argv) == 2 else _local_target()
    with tempfile.TemporaryDirectory() as scratch:
        extra = programs(Path(scratch)) if programs else {}
        prebuild(Path(argv[0]), list(GPU_SIZES), extra, target=target)
    print(
        f"wrote {len(GPU_SIZES) + len(extra) + 2} programs for {target} and {len(RUNTIME_LIBS)} libraries to {argv[0]}"
    )
    return 0


def _local_target() -> str:
    """This machine's GPU's target, or TARGET (nvidia:90) where it has none."""
    from stackcheck.evidence import device_profile

    profile = device_profile.current()
    return target_of(profile.capability) if profile is not None else TARGET


def listing_program_name(section: str) -> str:
    """The prebuilt name of the course's standalone Mojo program of ``section`` (§10.5)."""
    return f"course_listing_{section}"
