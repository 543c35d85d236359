"""§8.1: torch.compile's default backend is Inductor, which writes the compiled forward's code (its GEMM
included). torch.compile is not OpenXLA: PyTorch/XLA is a separate path. (Where torch_xla is not
installed, "the forward did not import it" cannot fail, so the test checks only what Inductor wrote.)"""

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
def test_the_compiled_forward_runs_through_inductor_not_xla(impl, stack, device):
    torch = need("torch")
    x, w, b = make_inputs(16, 8, 4, seed=71)
    torch._dynamo.reset()  # compile afresh: Inductor writes its code while the forward runs
    y, codes = inductor_code(impl.torch_compiled_forward, *torch_in((x, w, b), device, "float32"))
    assert_matmul_compiled(codes)
    if importlib.util.find_spec("torch_xla") is not None:  # only where it could have been used
        assert "torch_xla" not in sys.modules, "torch.compile does not use PyTorch/XLA"
    assert_matches_reference(
        torch_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=8, stack=stack, device=device
    )
