"""Compile caches load a program compiled before from disk without compiling it: JAX's persistent
compilation cache (``JAX_COMPILATION_CACHE_DIR``: on in every graded run, and on some learners'
machines) and Inductor's FX graph and AOT autograd caches (on by default, warm from any earlier compile
of the same graph). The tests that time a first call (MC09, S6.5-regimes) or read XLA's dumps
(S5.1-passes, S9.7-llo) must still see a compile: ``fresh_jit`` and the dump helpers give each program
a name of its own, and ``fresh_compile`` compiles with Inductor's caches off."""

import json
import os
import subprocess
import sys

import pytest

from stackcheck.stacks.available import need

pytestmark = pytest.mark.meta

PROBE = """
import json, sys
import jax, numpy as np
from stackcheck.evidence.compiles import fresh_jit
from stackcheck.toolchains import ir

hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
a = jax.numpy.asarray(np.ones((16, 16), np.float32))

def work(p, q):
    return jax.numpy.maximum(p @ q, 0)

seen = {}
jax.jit(work)(a, a).block_until_ready()
seen["plain jit"], hits[:] = len(hits), []
fresh_jit(jax, work)(a, a).block_until_ready()
seen["fresh_jit"], hits[:] = len(hits), []
seen["xla_dump files"] = len(ir.xla_dump(work, a, a, folder=__import__("pathlib").Path(sys.argv[1])))
seen["cache hits in xla_dump"] = len(hits)
print(json.dumps(seen))
"""


def test_a_persistent_cache_does_not_hide_the_compiles_tests_time_or_dump(tmp_path):
    """Fresh interpreters with a cache folder of their own: JAX reads its persistent cache from a process's
    first compile on, and this process's caches are warm."""
    need("jax")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
    env.update(JAX_PLATFORMS="cpu", JAX_COMPILATION_CACHE_DIR=str(tmp_path / "cache"))
    env.update(JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    runs = []
    for run in ("first", "second"):
        folder = tmp_path / run
        folder.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(folder)], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert second["plain jit"] >= 1, f"the cache is on: a second process loads the same program from it: {runs}"
    assert second["fresh_jit"] == 0, f"fresh_jit's program is new to the cache in every process: {runs}"
    assert second["cache hits in xla_dump"] == 0, f"xla_dump compiles its program, never loads it: {runs}"
    assert second["xla_dump files"] > 0 and second["xla_dump files"] == first["xla_dump files"], (
        f"the second dump holds as many files as the first: {runs}"
    )


TORCH_PROBE = """
import json
import torch
from torch._dynamo.utils import counters
from stackcheck.evidence.compiles import fresh_compile

def work(x, w, b):
    return torch.relu(x @ w + b)

args = (torch.ones(32, 16), torch.ones(16, 8), torch.ones(8))
seen = {}
for name in ("plain compile", "plain compile again", "fresh_compile"):
    counters.clear()
    torch._dynamo.reset()
    (fresh_compile(torch, work) if name == "fresh_compile" else torch.compile(work))(*args)
    seen[name] = counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]
print(json.dumps(seen))
"""


def test_a_warm_inductor_cache_does_not_hide_the_compile_mc09_times(tmp_path):
    """A fresh interpreter with a cache folder of its own: Inductor's caches are read from a process's first
    compile on, and this process's are warm."""
    need("torch")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE"))}
    env.update(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", TORCH_PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["plain compile"] == 0 and seen["plain compile again"] >= 1, (
        f"the cache is on: a second compile of the same graph loads it from disk: {seen}"
    )
    assert seen["fresh_compile"] == 0, f"fresh_compile compiles, never loads from the cache: {seen}"
