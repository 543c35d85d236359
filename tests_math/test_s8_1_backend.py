"""§8.1: torch.compile's default backend is Inductor, which writes the compiled forward's code (its GEMM
included). torch.compile is not OpenXLA: PyTorch/XLA is a separate path, never imported by it. Where
torch_xla is not installed, a stand-in package of that name on the path makes "never imported"
checkable: a compile that reached for PyTorch/XLA would import it."""

import importlib.util
import sys

import pytest

from stackcheck.evidence.compiles import assert_matmul_compiled, inductor_code
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import torch_in, torch_out


@pytest.mark.claim("S8.1-backend")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_the_compiled_forward_runs_through_inductor_not_xla(impl, stack, device, tmp_path, monkeypatch):
    torch = need("torch")
    if importlib.util.find_spec("torch_xla") is None:  # a stand-in the compile could import, as the real one
        (tmp_path / "torch_xla").mkdir()
        (tmp_path / "torch_xla" / "__init__.py").write_text('"""stackcheck\'s stand-in for PyTorch/XLA."""\n')
        monkeypatch.syspath_prepend(str(tmp_path))
    assert "torch_xla" not in sys.modules, "PyTorch/XLA was imported before the compile: nothing can be read"
    x, w, b = make_inputs(16, 8, 4, seed=71)
    torch._dynamo.reset()  # compile afresh: Inductor writes its code while the forward runs
    y, codes = inductor_code(impl.torch_compiled_forward, *torch_in((x, w, b), device, "float32"))
    assert_matmul_compiled(codes)
    assert "torch_xla" not in sys.modules, "torch.compile does not use PyTorch/XLA: the forward imported torch_xla"
    assert_matches_reference(
        torch_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=8, stack=stack, device=device
    )
