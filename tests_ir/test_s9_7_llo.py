"""§9.7: after HLO a TPU goes through LLO; that is the TPU's path, not an IR every backend uses.
XLA's CPU backend, dumped stage by stage, goes from HLO to LLVM IR with no LLO; its GPU backend
from HLO to LLVM IR and then PTX, with no LLO. (The TPU's own LLO dump is not checked: no TPU was
available to find the flags that write it.)"""
import pytest

from stackcheck import assert_matches_reference, need, reference_forward, stack_params
from stackcheck import ir
from stackcheck.numerics import make_inputs
from stackcheck.stacks import jax_in, jax_out


@pytest.mark.claim("S9.7-llo")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu", "cuda")))
def test_the_cpu_and_gpu_backends_lower_hlo_to_llvm_ir_not_llo(impl, stack, device, tmp_path):
    need("jax")
    x, w, b = make_inputs(8, 4, 3, seed=97)
    args = jax_in((x, w, b), device, "float32")
    names = ir.xla_dump(impl.jax_forward, *args, folder=tmp_path)
    ir.assert_llvm_not_llo(names)
    llvm = next(tmp_path / n for n in names if n.endswith(".ll"))
    assert "define " in llvm.read_text(), f"{llvm.name} is an LLVM IR module"
    if device == "cuda":
        ptx = [n for n in names if n.endswith(".ptx")]
        assert ptx and ".entry" in (tmp_path / ptx[0]).read_text(), f"the GPU backend's LLVM IR becomes PTX: {names}"
    assert_matches_reference(jax_out(impl.jax_forward(*args), "float32"), reference_forward(x, w, b),
                             dtype="float32", k=4, stack=stack, device=device)
