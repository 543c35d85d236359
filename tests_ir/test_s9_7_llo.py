"""§9.7: after HLO a TPU goes through LLO; that is the TPU's path, not an IR every backend uses.
XLA's CPU backend, dumped stage by stage, goes from HLO to LLVM IR with no LLO. (The TPU's own
LLO dump is not checked: no TPU was available to find the flags that write it.)"""

import pytest

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
    ir.assert_llvm_not_llo(names)
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
