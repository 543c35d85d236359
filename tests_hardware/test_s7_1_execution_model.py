"""§7.1: "GPU 커널은 여러 스레드나 프로그램 인스턴스가 협력해 수행하도록 작성·컴파일된 장치 코드다 ...
GPU 커널의 실행 모델을 TPU에 완전히 동일하게 적용하면 안 된다." On a GPU a kernel's programs run at
once and in no order: 65536 Triton programs that each read, add one to and write back one counter
lose most of their adds (an atomic add keeps them all). On a TPU, a Pallas grid runs its steps one
after another on a core: steps that each add their block into the same output block (the
accumulation every Pallas TPU matmul relies on) give the exact sum. The TPU half runs only where
jax.devices("tpu") exists: never on this project's machines."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_exact
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

PROGRAMS = 65536
MOST = 0.5  # H200: 315-458 of 65536 adds kept over five launches (0.5-0.7 %): the line is 70x above them
STEPS = 16  # the TPU grid's steps, each adding an [8, 128] block of small integers


@pytest.mark.claim("S7.1-execution-model")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_a_gpus_programs_run_at_once(device, evidence):
    need("torch")
    from stackcheck.toolchains import triton_kernels

    atomic = triton_kernels.programs_counted(PROGRAMS, atomic=True, device=device)
    counted = triton_kernels.programs_counted(PROGRAMS, atomic=False, device=device)
    evidence(**judges.assert_programs_run_at_once(counted, atomic, PROGRAMS, MOST))


def _accumulate(x_ref, o_ref):
    """Add this grid step's block into the one output block every step maps to."""
    from jax.experimental import pallas as pl

    @pl.when(pl.program_id(0) == 0)
    def _():
        o_ref[...] = x_ref[...] * 0

    o_ref[...] += x_ref[...]


@pytest.mark.claim("S7.1-execution-model")
@pytest.mark.tpu
@pytest.mark.jax
def test_a_tpu_grid_runs_its_steps_in_order(tpu_device, evidence):
    jax = need("jax")
    from jax.experimental import pallas as pl

    blocks = (np.arange(STEPS * 8 * 128) % 7).astype(np.float32).reshape(STEPS * 8, 128)
    call = pl.pallas_call(
        _accumulate,
        out_shape=jax.ShapeDtypeStruct((8, 128), blocks.dtype),
        grid=(STEPS,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),  # every step writes the same block
    )
    total = np.asarray(call(jax.device_put(blocks, tpu_device)))
    evidence(steps=STEPS, device_kind=tpu_device.device_kind)
    assert_exact(total, blocks.reshape(STEPS, 8, 128).sum(axis=0), what="the blocks summed across grid steps")
