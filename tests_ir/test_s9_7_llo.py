"""§9.7: after HLO a TPU goes through LLO; that is the TPU's path, not an IR every backend uses.
XLA's CPU backend, dumped stage by stage, goes from HLO to LLVM IR with no LLO. On a TPU (where
jax.devices("tpu") exists; never yet here) the same dump is read for LLO files after the optimized
HLO; a libtpu that writes LLO only under its private flags skips with what it dumped."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir


@pytest.mark.claim("S9.7-llo")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu",)))
def test_the_cpu_backend_lowers_hlo_to_llvm_ir_not_llo(impl, stack, device, tmp_path):
    need("jax")
    x, w, b = make_inputs(8, 4, 3, seed=97)
    args = jax_in((x, w, b), device, "float32")
    names = ir.xla_dump(impl.jax_forward, *args, folder=tmp_path)
    judges.assert_llvm_not_llo(names)
    llvm = next(tmp_path / n for n in names if n.endswith(".ll"))
    assert "define " in llvm.read_text(), f"{llvm.name} is an LLVM IR module"
    assert_matches_reference(
        jax_out(impl.jax_forward(*args), "float32"),
        reference_forward(x, w, b),
        dtype="float32",
        k=4,
        stack=stack,
        device=device,
    )


@pytest.mark.claim("S9.7-llo")
@pytest.mark.tpu
@pytest.mark.jax
def test_the_tpu_backend_goes_from_hlo_to_llo(impl, tpu_device, tmp_path, evidence):
    jax = need("jax")
    x, w, b = make_inputs(256, 512, 128, seed=98)
    args = [jax.device_put(a, tpu_device) for a in (x, w, b)]
    names = ir.xla_dump(impl.jax_forward, *args, folder=tmp_path)
    if not names:
        pytest.skip("this libtpu wrote nothing for xla_dump_to (openxla/xla#23350): nothing to read")
    optimized = [n for n in names if "after_optimizations" in n]
    assert optimized, f"the TPU's dump holds the optimized HLO: {names}"
    llo = ir.llo_files(names)
    evidence(optimized_hlo=optimized, llo=llo[:10], dumped=len(names))
    if not llo:
        pytest.skip(
            f"the TPU's dump holds HLO but no LLO file (libtpu's LLO dump takes its private flags): {names[:20]}"
        )
    assert_matches_reference(
        np.asarray(impl.jax_forward(*args)), reference_forward(x, w, b), dtype="float32", k=512, device="tpu"
    )
