"""Probes of a Mojo package's custom ReLU ``study_relu`` through MAX's torch bridge (§10.3, §10.4).
Each takes the package's path and the judge's inputs as numbers, and returns data: a graded
submission's package runs them in the launcher (stackcheck.impl.mojo_source.probe), a plain run here.
Tests call them through ``mojo_source.probe`` and judge what comes back."""

from __future__ import annotations

import importlib

import numpy as np

from stackcheck.evidence import timing
from stackcheck.evidence.gradients import assert_no_gradient_through
from stackcheck.evidence.numerics import uniform
from stackcheck.stacks.available import need

BRIDGE = "max.experimental.torch"  # MAX's torch bridge (MAX 26.7 or later): the test skips without it


def _bridge():
    return importlib.import_module(BRIDGE)


def no_gradient(package, shape: tuple, seed: int) -> tuple[dict, object]:
    """(what the custom ReLU did with an input autograd tracks, its output on a plain input): §10.3."""
    torch = need("torch")
    op = _bridge().CustomOpLibrary(package).study_relu
    z = torch.from_numpy(uniform(shape, seed=seed))
    out = torch.empty_like(z)
    op(out, z)  # compiles for this shape: a compile error fails here, not as the probe's "refused"
    found = assert_no_gradient_through(op, z, out)
    op(out, z)
    return found, out.numpy()


SAMPLE = 1 << 18  # elements of a large output that come back (a 4M x 16 output is 256 MB)


def sampled(values, seed: int):
    """``values`` flattened, or at most SAMPLE of them at seeded random places: the same places for
    the probe's output and the judge's expected values."""
    flat = np.asarray(values).reshape(-1)
    if flat.size <= SAMPLE:
        return flat
    return flat[np.random.default_rng(seed).choice(flat.size, SAMPLE, replace=False)]


def against_builtin(package, device: str, shapes: dict, trials: int = 15) -> dict:
    """§10.4: the custom ReLU and MAX's built-in ops.relu through the same bridge, on ``shapes``
    ({label: (shape, seed)}), timed interleaved: per label their outputs (``sampled``), their samples
    (seconds) and the custom op's A/A noise floor."""
    torch = need("torch")
    bridge = _bridge()
    from max.graph import ops

    ops_ = {
        "custom": bridge.CustomOpLibrary(package).study_relu,
        "built-in": bridge.graph_op(lambda z: ops.relu(z), name="stackcheck_builtin_relu"),
    }
    sync = (lambda _: torch.cuda.synchronize()) if device == "cuda" else None
    found = {}
    for label, (shape, seed) in shapes.items():
        z = torch.from_numpy(uniform(tuple(shape), seed=seed)).to(device)
        outs = {name: torch.empty_like(z) for name in ops_}
        for name, op in ops_.items():
            op(outs[name], z)  # compiles for this shape and device
        timers = {name: timing.host_timer(lambda op=op, o=outs[name]: op(o, z), sync) for name, op in ops_.items()}
        runs = timing.interleaved(timers, "host-sync", trials=trials, warmup=3)
        found[label] = {
            "outputs": {name: sampled(out.cpu().numpy(), seed) for name, out in outs.items()},
            "samples": {name: m.samples for name, m in runs.items()},
            "floor": timing.noise_floor(timers["custom"], "host-sync", trials=9),
        }
    return found
