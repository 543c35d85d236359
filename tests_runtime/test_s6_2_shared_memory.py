"""§6.2: "통합 메모리와 공유 메모리 구조에서는 물리적인 전송 방식도 달라질 수 있다." On the CPU, where
host and device are one memory, torch.from_numpy and MAX's Buffer.from_numpy hand over the NumPy
array's own memory: the same address, and a write to the array shows through both. The forward on the
shared tensor gives the right Y."""

import pytest

from stackcheck.evidence import verdicts
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need


@pytest.mark.claim("S6.2-shared-memory")
@pytest.mark.max
@pytest.mark.torch
def test_cpu_tensors_and_buffers_use_the_numpy_arrays_memory(impl, evidence):
    torch = need("torch")
    need("max")
    from max.driver import Buffer

    x, w, b = make_inputs(6, 5, 4, seed=62)
    tensor, buffer = torch.from_numpy(x), Buffer.from_numpy(x)
    viewed = buffer.to_numpy()
    y = impl.torch_forward(tensor, torch.from_numpy(w), torch.from_numpy(b))
    assert_matches_reference(y.numpy(), reference_forward(x, w, b), dtype="float32", k=5)
    addresses = {"torch": tensor.data_ptr(), "max": viewed.ctypes.data}
    x[0, 0] = 123.0
    after = {"torch": float(tensor[0, 0]), "max": float(viewed[0, 0])}
    evidence(addresses=addresses, array=x.ctypes.data, after_write=after)
    verdicts.assert_same_memory(x, addresses, after)
