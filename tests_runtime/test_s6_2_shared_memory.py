"""§6.2: "통합 메모리와 공유 메모리 구조에서는 물리적인 전송 방식도 달라질 수 있다." On the CPU, where
host and device are one memory, torch.from_numpy and MAX's Buffer.from_numpy hand over the NumPy
array's own memory: the same address, and a write to the array shows through both. A GPU with memory
of its own gets a copy instead (a Memcpy HtoD). The forward on either gives the right Y."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


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
    judges.assert_same_memory(x, addresses, after)


@pytest.mark.claim("S6.2-shared-memory")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_a_gpu_with_its_own_memory_gets_a_host_to_device_copy(impl, evidence, device):
    """The other case: a discrete GPU has memory of its own. The same NumPy array, handed to it, is
    copied (the profiler shows a Memcpy HtoD of its bytes), to an address that is not the array's, and
    a later write to the array does not reach the copy."""
    torch = need("torch")
    x, w, b = make_inputs(64, 32, 16, seed=63)
    torch.cuda.synchronize(device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        on_gpu = torch.from_numpy(x).to(device)
        torch.cuda.synchronize(device)
    copies = [e for e in prof.events() if "Memcpy HtoD" in e.name]
    before = float(on_gpu[0, 0])
    x[0, 0] = 123.0
    found = {"htod_copies": len(copies), "gpu_address": on_gpu.data_ptr(), "array": x.ctypes.data}
    evidence(**found, after_write=float(on_gpu[0, 0]))
    assert copies and on_gpu.data_ptr() != x.ctypes.data, f"handing a host array to the GPU copies it: {found}"
    assert float(on_gpu[0, 0]) == before != 123.0, "the GPU's copy does not see a later write to the array"
    x[0, 0] = before
    y = impl.torch_forward(on_gpu, torch.from_numpy(w).to(device), torch.from_numpy(b).to(device))
    assert_matches_reference(y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=32)
