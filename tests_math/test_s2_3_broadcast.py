"""§2.1/§2.3 and experiment B: b is broadcast over N rows as a view, not copied N times."""
import numpy as np
import pytest

from stackcheck import need, device_params
from stackcheck.numerics import assert_exact, make_inputs

N, M = 64, 5


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.numpy
def test_numpy_bias_is_a_stride_zero_view(impl):
    _, _, b = make_inputs(1, 1, M)
    view = impl.broadcast_bias(b, N)
    assert view.shape == (N, M)
    assert view.strides[0] == 0, f"rows of the broadcast bias must share memory (stride 0), got strides {view.strides}"
    assert np.shares_memory(view, b), "the broadcast bias must be a view of b, not a copy"
    assert_exact(view, np.tile(b, (N, 1)), what="the broadcast bias", N=N, M=M)


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.parametrize("device", device_params("torch"))
def test_torch_bias_is_a_stride_zero_view(impl, device):
    torch = need("torch")
    b = torch.from_numpy(make_inputs(1, 1, M)[2]).to(device)
    view = impl.torch_broadcast_bias(b, N)
    assert tuple(view.shape) == (N, M)
    assert view.stride(0) == 0, f"rows must share memory (stride 0), got stride {view.stride()}"
    assert view.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(), "the view must share b's storage"
    assert view.untyped_storage().nbytes() == M * b.element_size(), "no N-fold copy of b may exist behind the view"
    assert torch.equal(view, b.unsqueeze(0).repeat(N, 1))
