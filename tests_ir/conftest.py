import pytest

from stackcheck.evidence.numerics import make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.records import jax_device

N, K, M = 64, 32, 16


@pytest.fixture
def example_inputs():
    """X[64, 32], W[32, 16], b[16] as float32 NumPy, seed 0."""
    return make_inputs(N, K, M, seed=0)


@pytest.fixture
def torch_inputs(example_inputs, device):
    torch = need("torch")
    return tuple(torch.from_numpy(v).to(device) for v in example_inputs)


@pytest.fixture
def jax_inputs(example_inputs, device):
    jax = need("jax")
    target = jax_device(device)
    return tuple(jax.device_put(v, target) for v in example_inputs)
