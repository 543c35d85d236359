"""§8.4: a change of execution condition, such as torch.no_grad, is a new compile; warm up under the
condition you will measure. Compiles per call of the implementation's compiled forward."""

import pytest

from stackcheck.evidence.compiles import torch_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import torch_in, torch_out


@pytest.mark.claim("S8.4-grad-mode")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_no_grad_after_a_grad_mode_warm_up_compiles_once_more(impl, stack, device):
    torch = need("torch")
    x, w, b = make_inputs(12, 6, 5, seed=81)
    args = torch_in((x, w, b), device, "float32")
    torch._dynamo.reset()
    counts = []
    for grad in (True, True, False, False):  # warm-up with grad enabled, then the 'measurement' under no_grad
        with torch.set_grad_enabled(grad), torch_compiles() as count:
            y = impl.torch_compiled_forward(*args)
        counts.append(count.compiles)
        assert_matches_reference(
            torch_out(y, "float32"),
            reference_forward(x, w, b),
            dtype="float32",
            k=6,
            stack=stack,
            device=device,
            grad_enabled=grad,
        )
    assert counts == [1, 0, 1, 0], (
        f"compiles per call, grad on, on, off, off: {counts}; the first no_grad call compiles anew"
    )
