"""§10.5: a standalone Mojo program launches bias+ReLU on the GPU through DeviceContext.

On any machine its PTX (built for nvidia:90) must hold the bounds check: a `setp` against
element_count - 1 branching past every global load and store. On CUDA the program runs at sizes
no block divides and checks its result on the host (and a canary past the end)."""

import subprocess
from pathlib import Path

import pytest

from stackcheck.stacks import available
from stackcheck.toolchains import mojo_build

SIZES = list(mojo_build.GPU_SIZES)


def _ids(sizes):
    return [f"N{s['N']}-M{s['M']}" for s in sizes]


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.mojo
@pytest.mark.parametrize("sizes", SIZES, ids=_ids(SIZES))
def test_ptx_guards_every_load_and_store(sizes):
    ptx = mojo_build.kernel_ptx(mojo_build.source("bias_relu_gpu.mojo"), "bias_relu", sizes)
    assert mojo_build.guard_problems(ptx, sizes["N"] * sizes["M"]) == []


def program(sizes, prebuilt: str | None) -> tuple[Path, dict]:
    """The GPU program for ``sizes``: from --mojo-prebuilt, else built here. Returns (binary, env)."""
    if prebuilt:
        binary = Path(prebuilt) / mojo_build.prebuilt_name(sizes)
        if not binary.exists():
            pytest.fail(
                f"--mojo-prebuilt {prebuilt} has no {binary.name}: make it with "
                f"`python -m stackcheck.mojo_build {prebuilt}` on a machine with Mojo"
            )
        return binary, mojo_build.runtime_environment(Path(prebuilt))
    if available.stack_missing("mojo"):
        raise available.Missing(
            f"{available.stack_missing('mojo')}; or pass --mojo-prebuilt DIR with programs built elsewhere", "mojo"
        )
    binary = mojo_build.build(mojo_build.source("bias_relu_gpu.mojo"), emit="exe", sizes=sizes)
    return binary, mojo_build.runtime_environment()


@pytest.mark.claim("S10.5-mojo-gpu")
@pytest.mark.cuda
@pytest.mark.parametrize("sizes", SIZES, ids=_ids(SIZES))
def test_runs_on_the_gpu_and_checks_itself(request, sizes):
    binary, env = program(sizes, request.config.getoption("mojo_prebuilt"))
    done = subprocess.run([str(binary)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, f"{binary.name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert f"bias_relu check passed: N = {sizes['N']} M = {sizes['M']}" in done.stdout, done.stdout
