"""§8.2: torch eager and torch.compile agree on Y, loss = mean(Y²), dX, dW and db."""

import numpy as np
import pytest

from stackcheck.evidence.gradients import closed_form
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

NAMES = ("Y", "loss", "dX", "dW", "db")
N, K, M = 32, 16, 8  # the course's sizes


@pytest.mark.claim("S8.2-grads")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_eager_and_compiled_agree_on_outputs_and_gradients(impl, device):
    torch = need("torch")
    inputs = make_inputs(N, K, M, seed=0)
    x, w, b = (torch.from_numpy(v).to(device) for v in inputs)
    eager = impl.torch_grads(impl.torch_forward, x, w, b)
    compiled = impl.torch_grads(impl.torch_compiled_forward, x, w, b)
    exact = closed_form(*inputs)
    for name, e, c in zip(NAMES, eager, compiled):
        assert e is not None and c is not None, f"{name}: a gradient is missing (is an input cut from autograd?)"
        e, c = (t.detach().cpu().numpy() for t in (e, c))
        common = dict(dtype="float32", k=max(N, K), device=device, N=N, M=M, seed=0)
        assert_matches_reference(c, e, what=f"compiled {name} vs eager {name}", **common)
        assert_matches_reference(e, exact[name], what=f"eager {name} vs the closed form", **common)
    assert np.asarray(exact["dX"]).any(), "inputs must leave some Z > 0, or the gradient check is empty"
