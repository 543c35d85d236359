"""§7.2: "모든 GPU가 HBM을 사용하는 것은 아니다". The GPU's memory as its driver describes it (bus
width and clock): HBM stacks are 1024 bits wide or more, GDDR and LPDDR buses 64 to 512, an
integrated GPU uses the host's. A copy far larger than the L2 runs at a share of the peak that bus
gives, so the description is the memory in use. A GPU without HBM shows the statement; an HBM GPU
cannot, and skips before it runs (the gate "memory-without-hbm", from the driver's bus width). Where
no such GPU has run, docs/gpu.md shows the statement from the recorded profiles' published buses
(a T4, an L4, GeForce cards: "from the profile, not run")."""

import pytest

from stackcheck.evidence import device_profile, hardware, timing
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

L2_TIMES = 8  # the copied tensor is this many times the L2: the copy runs through device memory


@pytest.mark.claim("S7.2-memory-kind")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
@pytest.mark.gpu_needs("memory-without-hbm")
def test_not_every_gpu_uses_hbm(device, evidence):
    torch = need("torch")
    props = torch.cuda.get_device_properties(device)
    if not hasattr(props, "memory_bus_width"):
        pytest.skip(f"torch {torch.__version__} does not report the memory bus: upgrade torch to read it")
    profile = device_profile.current()
    n = min(L2_TIMES * profile.l2_bytes, profile.budget_bytes // 4) // 4
    x = torch.empty(n, dtype=torch.float32, device=device).uniform_(generator=torch.Generator(device).manual_seed(72))
    y = torch.empty_like(x)
    runs = timing.interleaved({"copy": timing.cuda_event_timer(lambda: y.copy_(x))}, "device-events", trials=9)
    assert torch.equal(y, x), "the timed copy did not copy"
    found = hardware.assert_bus_describes_memory(
        props.memory_bus_width, props.memory_clock_rate, 2 * n * 4 / runs["copy"].median
    )
    kind = hardware.memory_kind(props.memory_bus_width, bool(props.is_integrated))
    evidence(name=props.name, memory_kind=kind, copied_bytes=n * 4, copy=runs["copy"].summary(), **found)
    assert kind != "HBM", f"the profile said {profile.name} has no HBM, its driver says it has: {found}"
