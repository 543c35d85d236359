"""§14.3: before comparing results, check the environment: jax and jaxlib compatible, and the
device actually selected the one asked for (--require); "지원 버전과 compiler 환경 | Python 버전 지원,
backend 설치" for torch.compile; "서로 호환되는 MAX·Mojo" for a custom op."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks import compat
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


@pytest.mark.claim("S14.3-env")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jaxlib_matches_jax_and_the_selected_device_is_the_one_required(impl, request, evidence, device):
    """Run for a device, the check requires that device (besides what --require names)."""
    jax = need("jax")
    found = compat.jax_environment()
    required = set(request.config.getoption("require")) | ({device} - {"cpu"})
    evidence(**found, required=sorted(required))
    problems = compat.environment_problems(found, required)
    assert not problems, "; ".join(problems)
    x, w, b = make_inputs(6, 5, 4, seed=143)
    y = impl.jax_forward(*(jax.numpy.asarray(a) for a in (x, w, b)))
    assert {d.platform for d in y.devices()} == {found["first_device"]}, "the forward ran where jax selected"
    assert_matches_reference(np.asarray(y), reference_forward(x, w, b), dtype="float32", k=5)


@pytest.mark.claim("S14.3-env")
@pytest.mark.torch_compile
def test_torch_compile_is_supported_here_with_its_backend(impl, evidence):
    torch = need("torch")
    found = compat.torch_compile_environment()
    evidence(**{k: v for k, v in found.items() if k != "backends"}, inductor="inductor" in found["backends"])
    problems = compat.torch_compile_problems(found)
    assert not problems, "; ".join(problems)
    x, w, b = make_inputs(6, 5, 4, seed=144)
    y = impl.torch_compiled_forward(*(torch.from_numpy(a) for a in (x, w, b)))
    assert_matches_reference(y.detach().numpy(), reference_forward(x, w, b), dtype="float32", k=5)


@pytest.mark.claim("S14.3-env")
@pytest.mark.max
@pytest.mark.mojo
def test_max_and_mojo_belong_together(evidence):
    found = compat.max_mojo_environment()
    evidence(**found)
    problems = compat.max_mojo_problems(found)
    assert not problems, "; ".join(problems)
