"""Work of known cost for the runtime tests, on each device."""

import pytest

from stackcheck.stacks.available import need
from stackcheck.stacks.records import jax_device

SIZES = {"cpu": 2048, "cuda": 8192, "tpu": 8192}  # a matmul of ~0.1 s on 2 CPU cores; ~ms on a GPU


@pytest.fixture(scope="session")
def _jax_matmuls() -> dict:
    """device -> (f, a, b): built once per session (a compile and two n x n arrays each)."""
    return {}


@pytest.fixture
def jax_matmul(device, _jax_matmuls):
    """(jitted f, a, b) with a, b already on the device and f compiled: f(a, b) is pure work."""
    if device not in _jax_matmuls:
        jax = need("jax")
        n = SIZES[device]
        target = jax_device(device)
        a = jax.device_put(jax.numpy.full((n, n), 1.0 / n, dtype="float32"), target)
        b = jax.device_put(jax.numpy.ones((n, n), dtype="float32"), target)
        f = jax.jit(lambda p, q: p @ q)
        jax.block_until_ready(f(a, b))
        _jax_matmuls[device] = f, a, b
    return _jax_matmuls[device]


@pytest.fixture
def torch_matmul(device):
    torch = need("torch")
    n = SIZES[device]
    a = torch.full((n, n), 1.0 / n, device=device)
    b = torch.ones(n, n, device=device)
    torch.cuda.synchronize()
    return (lambda: a @ b), a, b
