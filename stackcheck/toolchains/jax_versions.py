"""The course's §9.3 listing under two versions of JAX (course §5.4, §9.3: op names and output
formats "버전과 backend에 따라 … 달라질 수 있다"): the installed one, and an older one pip puts in the
suite's cache (``OLDER``; needs an index to fetch it, once). Both run on one platform (the CPU: the
older jaxlib is a CPU build), in subprocesses, and each run's printout is read into its parts: the
jaxpr's primitives, the StableHLO ops, the compiled HLO's instruction names and opcodes, and Y."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from stackcheck.paths import data

OLDER = "0.4.38"  # prints a nested jit as `pjit` (JAX 0.7 renamed it `jit`); wheels for Python 3.10-3.13
HEADERS = ("=== Jaxpr ===", "=== StableHLO ===", "Y =", "=== Compiled program text ===")


def older_jax() -> Path:
    """A folder holding JAX and jaxlib ``OLDER`` (put first on PYTHONPATH), installed on first use;
    ``RuntimeError`` with pip's words where it cannot be fetched."""
    folder = data.cache_dir() / f"jax-{OLDER}"
    if (folder / "jax" / "__init__.py").exists():
        return folder
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--retries", "0", "--timeout", "15",
         "--target", str(partial), f"jax=={OLDER}", f"jaxlib=={OLDER}"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PIP_USER": "0"},  # --target, never --user
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise RuntimeError(" ".join((done.stderr or done.stdout).split())[-400:])
    try:
        partial.rename(folder)
    except OSError:  # another process put it there first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def run_listing(source: str, workdir: Path, platform: str, first_on_path: Path | None = None) -> str:
    """What ``source`` prints with JAX on ``platform``, ``first_on_path`` ahead of the installed packages."""
    env = {**os.environ, "JAX_PLATFORMS": platform}
    if first_on_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(first_on_path), *filter(None, [env.get("PYTHONPATH")])])
    script = workdir / "listing_9_3.py"
    script.write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=workdir, env=env, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"the §9.3 listing failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return done.stdout


def parts(printed: str) -> dict:
    """The §9.3 listing's printout by what it shows: version, jaxpr primitives, StableHLO ops,
    compiled HLO instruction names (their .N suffix dropped) and opcodes, and Y's text."""
    at = [printed.index(h) for h in HEADERS]
    jaxpr, stablehlo, y, hlo = (printed[a + len(h) : b] for a, h, b in zip(at, HEADERS, [*at[1:], len(printed)]))
    return {
        "version": re.search(r"JAX version:\s*(\S+)", printed).group(1),
        "jaxpr": sorted(set(re.findall(r"\w+:\w+\[[^\]]*\] = ([a-z_]\w*)", jaxpr))),
        "stablehlo": sorted(set(re.findall(r"\b(stablehlo\.\w+)", stablehlo))),
        "hlo_names": sorted(set(re.findall(r"^\s*(?:ROOT )?%([\w-]+?)(?:\.\d+)* = ", hlo, re.M))),
        "hlo_opcodes": sorted(set(re.findall(r"^\s*(?:ROOT )?%\S+ = \S+ ([a-z][\w-]*)\(", hlo, re.M))),
        "y": y,
    }
