"""§10.3: "뒤의 custom ReLU에도 별도의 backward·autograd 규칙을 정의하지 않는다. PyTorch·JAX의 gradient
예제와 지원 범위를 동일하게 보면 안 된다." The implementation's Mojo package, called from torch through
MAX's own bridge (max.experimental.torch.CustomOpLibrary): given an input that autograd tracks, the
custom ReLU is refused (or its output carries no gradient), while torch's relu of the same input
has one; on a plain input it computes ReLU."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.impl import mojo_source
from stackcheck.run import custom_ops
from stackcheck.stacks.available import need

pytestmark = [pytest.mark.max, pytest.mark.mojo]


@pytest.mark.claim("S10.3-no-backward")
@pytest.mark.cpu
def test_the_custom_relu_has_no_gradient_where_torchs_has_one(impl, evidence):
    torch = need("torch")
    need("max")
    pytest.importorskip(custom_ops.BRIDGE, reason="MAX's torch bridge (MAX 26.7 or later)")
    found, out = mojo_source.probe(custom_ops.no_gradient, impl, (8, 16), 113)
    z = uniform((8, 16), seed=113)
    assert_exact(out, np.maximum(z, 0), what="the custom ReLU through MAX's torch bridge")
    tracked = torch.from_numpy(z).requires_grad_(True)
    torch.relu(tracked).sum().backward()
    assert_exact(tracked.grad, (z > 0).astype(np.float32), what="torch's relu gradient (its contrast)")
    evidence(**found, torch_relu="has a gradient: dReLU/dz = (z > 0)")
