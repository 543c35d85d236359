"""§6.2: weights already on the device are reused. Repeated calls copy nothing from the host."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_device


@pytest.mark.claim("S6.2-resident")
@pytest.mark.parametrize("device", device_params("jax"))
def test_no_transfers_once_resident(impl, device):
    jax = need("jax")
    target = jax_device(device)
    x, w, b = make_inputs(64, 32, 16)
    resident = [jax.device_put(v, target) for v in (x, w, b)]
    forward = impl.jax_forward  # the implementation's own call path (it jits), host work included
    impl.jax_sync(forward(*resident))  # compile outside the guard
    with jax.transfer_guard("disallow"):
        for _ in range(5):
            y = forward(*resident)  # weights and inputs are on the device: nothing to copy
        impl.jax_sync(y)
        assert isinstance(y, jax.Array) and y.devices() == {target}, (
            f"Y stays on the device, a JAX array there: got {type(y).__name__}"
        )
        with pytest.raises(Exception, match=r"(?i)disallowed"):
            jax.jit(lambda p: p + 1)(x)  # the guard does catch a host array handed to a program
    assert_matches_reference(np.asarray(y), reference_forward(x, w, b), dtype="float32", k=32)


@pytest.mark.claim("S6.2-resident")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
def test_profiler_counts_no_host_to_device_copies(impl, evidence, device):
    torch = need("torch")
    x, w, b = (torch.from_numpy(v) for v in make_inputs(64, 32, 16))
    resident = [t.to(device) for t in (x, w, b)]
    impl.torch_forward(*resident)

    def copies(run):
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events() if "Memcpy HtoD" in e.name)

    kept = copies(lambda: [impl.torch_forward(*resident) for _ in range(10)])
    sent = copies(lambda: [impl.torch_forward(x.to(device), w.to(device), b.to(device)) for _ in range(10)])
    evidence(htod_copies_resident=kept, htod_copies_sent_each_call=sent)
    assert kept == 0 and sent >= 30, f"resident: {kept} copies; copied each call: {sent}"
