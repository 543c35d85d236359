"""The fixtures every claim test may use: the implementations under test, the §2.2 hand example,
evidence for the report, the Triton launches a test caused, and the pinned matmul precision (autouse)."""

from __future__ import annotations

import json
import sys
import tomllib

import numpy as np
import pytest

from stackcheck.evidence import device_profile, precision, repro
from stackcheck.impl.loader import Impl
from stackcheck.paths import data
from stackcheck.plugin.recorder import DRAWN, EVIDENCE, RUN
from stackcheck.stacks import available
from stackcheck.stacks.records import STACKS


@pytest.fixture
def impl(request: pytest.FixtureRequest) -> Impl:
    """The implementations under test: --impl's module where it provides a name, else the reference."""
    return request.config.stash[RUN].impl


@pytest.fixture(scope="session")
def hand_example() -> dict[str, np.ndarray]:
    """Course §2.2's hand example: X, W, b and the hand-computed A, Z, Y (float32), and the §9.5 loss."""
    with open(data.path("fixtures", "hand_example.toml"), "rb") as f:
        values = tomllib.load(f)
    return {k: (np.asarray(v, dtype=np.float32) if isinstance(v, list) else v) for k, v in values.items()}


@pytest.fixture
def launches():
    """The grids of the Triton kernels this test launched, any kernel, also from a child process
    (stackcheck.impl.isolation): call ``launches()`` for the list so far; each knows its kernel's checked
    program, to build it again (stackcheck.impl.kernel_source.compiled)."""
    from stackcheck.impl import kernel_source
    from stackcheck.toolchains import triton_kernels

    with triton_kernels.recorded_launches(describe=kernel_source.described) as grids:
        yield lambda: list(grids)


@pytest.fixture
def evidence(request: pytest.FixtureRequest):
    """Call ``evidence(**numbers)`` to attach measurements to this test's claims in the report; each
    carries the fifteen fields of course §14.4 (``stackcheck.evidence.repro``) under the key ``repro``, and
    the call returns the entry as recorded."""
    run = request.config.stash[RUN]

    def record(**numbers) -> dict:
        # plain JSON values: a worker sends them to the controller, and execnet refuses anything else
        # (torch's TorchVersion, a str subclass, ended a run in an INTERNALERROR)
        numbers = json.loads(json.dumps(numbers, default=str))
        entry = {
            **numbers,
            "repro": repro.record(run.environment_fingerprint(), numbers, request.node.stash.get(DRAWN, [])),
        }
        request.node.user_properties.append((EVIDENCE, entry))
        return entry

    return record


def _framework(item: pytest.Item, name: str):
    """torch or jax if this process already imported it or the test is about to use it."""
    if name in sys.modules:
        return sys.modules[name]
    if any(item.get_closest_marker(m) for m in (s.name for s in STACKS.values() if name in s.markers)):
        return available.need(name)
    return None


@pytest.fixture(autouse=True)
def _pinned_matmul_precision(request: pytest.FixtureRequest):
    """TF32 off and JAX precision 'highest' for every test not marked ``precision`` (numerics policy).
    A framework the test loads first is fingerprinted here, in its setup: JAX starts its backend then,
    not inside the test's body."""
    torch, jax = _framework(request.node, "torch"), _framework(request.node, "jax")
    request.config.stash[RUN].environment_fingerprint()
    if request.node.get_closest_marker("precision"):
        yield
        return
    with precision.pinned(torch, jax):
        yield


@pytest.fixture
def tpu_device():
    """The first TPU JAX sees, for a ``tpu`` test (the marker has skipped it where there is none)."""
    from stackcheck.stacks.available import need

    return need("jax").devices("tpu")[0]


@pytest.fixture
def mojo_program(request: pytest.FixtureRequest):
    """``mojo_program(name, build_here)`` -> (program, environment to run it in): the GPU program
    ``name`` from --mojo-prebuilt, else ``build_here()`` on this machine (which needs Mojo)."""
    from pathlib import Path

    from stackcheck.toolchains import mojo_build

    def find(name: str, build_here) -> tuple[Path, dict]:
        prebuilt = request.config.getoption("mojo_prebuilt")
        if prebuilt:
            profile = device_profile.current()
            misfit = mojo_build.prebuilt_misfit(Path(prebuilt), profile.capability if profile else None)
            if misfit:
                pytest.fail(misfit, pytrace=False)
            path = Path(prebuilt) / name
            if not path.exists():
                pytest.fail(
                    f"--mojo-prebuilt {prebuilt} has no {name}: make it with "
                    f"`python -m stackcheck.mojo_build {prebuilt}` on a machine with Mojo"
                )
            return path, mojo_build.runtime_environment(Path(prebuilt))
        if available.stack_missing("mojo"):
            raise available.Missing(
                f"{available.stack_missing('mojo')}; or pass --mojo-prebuilt DIR with programs built elsewhere", "mojo"
            )
        return build_here(), mojo_build.runtime_environment()

    return find
