"""§7.3, §7.4: a TPU runs the matmul on its MXU and elementwise work on its VPU, with VMEM beside
them and HBM behind; one TPU "TensorCore" is a whole core, not NVIDIA's matrix unit. Read from what
the TPU's compiler writes: the matmul is XLA's own op (no library call, as cuBLAS is on a GPU) and
ReLU a maximum inside a fusion; a Pallas kernel works on VMEM blocks. Runs only where
jax.devices("tpu") exists (never yet: no TPU was available; the GPU side is MC04 and MC05)."""

import numpy as np
import pytest

from stackcheck.evidence import hardware
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward, uniform
from stackcheck.stacks.available import need
from stackcheck.toolchains import ir


def _vmem_bias_relu(a_ref, b_ref, y_ref):
    """ReLU(A + b) on one block, read from and written to VMEM refs (the VPU's elementwise work)."""
    import jax.numpy as jnp

    y_ref[...] = jnp.maximum(a_ref[...] + b_ref[...], 0)


@pytest.mark.claim("S7.3-tpu")
@pytest.mark.tpu
@pytest.mark.jax
def test_pallas_works_in_vmem_on_a_tpu_core(impl, tpu_device, evidence):
    jax = need("jax")
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    evidence(**hardware.tpu_facts(tpu_device))
    n, m = 256, 128
    a_np, b_np = uniform((n, m), seed=71), uniform((1, m), seed=72)
    a, b = jax.device_put(a_np, tpu_device), jax.device_put(b_np, tpu_device)
    vmem = pltpu.MemorySpace.VMEM
    call = pl.pallas_call(
        _vmem_bias_relu,
        out_shape=jax.ShapeDtypeStruct((n, m), a.dtype),
        grid=(n // 128,),
        in_specs=[
            pl.BlockSpec((128, m), lambda i: (i, 0), memory_space=vmem),
            pl.BlockSpec((1, m), lambda i: (0, 0), memory_space=vmem),
        ],
        out_specs=pl.BlockSpec((128, m), lambda i: (i, 0), memory_space=vmem),
    )
    lowered = jax.jit(call).lower(a, b).as_text()
    assert "tpu_custom_call" in lowered, "a Pallas TPU kernel lowers to a Mosaic custom call"
    want = np.maximum(a_np.astype(np.float64) + b_np, 0)
    assert_matches_reference(np.asarray(call(a, b)), want, dtype="float32", k=1, what="Pallas ReLU(A + b) in VMEM")
    assert_matches_reference(
        np.asarray(impl.pallas_bias_relu(a, b[0])), want, dtype="float32", k=1, what="impl.pallas_bias_relu on the TPU"
    )


@pytest.mark.claim("S7.3-tpu")
@pytest.mark.tpu
@pytest.mark.jax
def test_the_tpu_compiles_the_matmul_itself_and_relu_as_vector_work(impl, tpu_device, evidence):
    jax = need("jax")
    x, w, b = make_inputs(256, 512, 128, seed=73)
    args = [jax.device_put(a, tpu_device) for a in (x, w, b)]
    hlo = jax.jit(impl.jax_forward).lower(*args).compile().as_text()
    found = ir.tpu_matmul_and_relu(hlo)
    evidence(**hardware.tpu_facts(tpu_device), **found)
    assert found["matmul_ops"] and not found["library_calls"], (
        f"XLA's TPU backend emits the matmul for the MXU itself (a dot or convolution), no library call: {found}"
    )
    assert found["relu_fusions"], f"ReLU is a maximum inside a fusion: vector work, not a call: {found}"
    assert_matches_reference(
        np.asarray(impl.jax_forward(*args)), reference_forward(x, w, b), dtype="float32", k=512, device="tpu"
    )
