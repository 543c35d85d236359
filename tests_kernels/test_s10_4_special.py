"""§10.4: the study ReLU "assumes finite float32 inputs; it is not a general activation that
guarantees NaN propagation, signed zero or every dtype". On finite values and infinities it agrees
with MAX's built-in relu; on NaN and -0 it follows its own `select(value > 0, value, 0)`, which the
built-in need not; fp16 goes through the built-in path only. Recorded, bit by bit. (Z = X @ W + b
reaches the relus through a matmul and an add, so -0 arrives as +0, and a float32 denormal may be
flushed to zero: both are recorded, as the course says such values are outside the listing's scope.
A second test feeds Z to the relus directly, so NaN and -0 reach study_relu as given.)"""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_exact, assert_relu_by_select
from stackcheck.run import max_graphs
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir

pytestmark = [pytest.mark.mojo, pytest.mark.max]

SPECIAL = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1.5, 2.5, 1e-45, -3e38], dtype=np.float32)


def bits(values) -> list[str]:
    return [f"{v!r}{'(-)' if np.signbit(v) else ''}" for v in np.asarray(values, dtype=np.float32)]


@pytest.mark.claim("S10.4-special")
@pytest.mark.max_graph("math")
@pytest.mark.parametrize("device", device_params("mojo"))
def test_study_relu_agrees_on_finite_and_infinite_values_and_follows_select_on_nan_and_minus_zero(
    impl, evidence, device
):
    x, w, b = SPECIAL.reshape(-1, 1), np.ones((1, 1), np.float32), np.array([-0.0], np.float32)
    graph = max_graphs.built(max_graphs.on_device("math", device), impl)
    assert ir.max_custom_ops(graph) == ["study_relu"], (
        f"y_mojo must come from the custom op study_relu, not the built-in relu: custom ops "
        f"{ir.max_custom_ops(graph)} in {[line.strip()[:160] for line in str(graph).splitlines() if 'custom' in line]}"
    )
    out = max_graphs.execute(max_graphs.on_device("math", device), impl, x, w, b)
    z, builtin, custom, half = (out[name][:, 0] for name in ("z", "y", "y_mojo", "y_float16"))
    evidence(
        device=device,
        inputs=bits(SPECIAL),
        z=bits(z),
        builtin=bits(builtin),
        custom=bits(custom),
        builtin_fp16=bits(half),
    )
    assert np.isnan(z[0]) and np.isinf(z[3:5]).all() and (z[5:7] == SPECIAL[5:7]).all(), (
        f"NaN, ±inf and ordinary values must reach the relus: Z = {bits(z)}"
    )
    ordinary = np.isfinite(z) & (z != 0) | np.isinf(z)
    assert_exact(custom[ordinary], builtin[ordinary], what="study_relu vs built-in relu on finite values and ±inf")
    assert_relu_by_select(z, custom, what="study_relu")  # the listing's select: NaN > 0 and ±0 > 0 are false
    assert np.isinf(half[3]) and half[4] == 0, f"fp16 built-in relu keeps +inf and zeroes -inf: {bits(half)}"


@pytest.mark.claim("S10.4-special")
@pytest.mark.max_graph("special")
@pytest.mark.parametrize("device", device_params("mojo"))
def test_nan_and_minus_zero_reach_study_relu_as_given(impl, evidence, device):
    """Z straight into the relus (no matmul to turn -0 into +0): on NaN and -0 study_relu gives what
    the listing's select(z > 0, z, 0) gives, +0 for both, bit for bit; the built-in relu's answer is
    recorded beside it, and both agree on every other value."""
    out = max_graphs.run(max_graphs.on_device("special", device), impl, SPECIAL)
    builtin, custom = out["y"], out["y_mojo"]
    evidence(device=device, inputs=bits(SPECIAL), builtin=bits(builtin), custom=bits(custom))
    normal = ~((SPECIAL != 0) & (np.abs(SPECIAL) < np.finfo(np.float32).tiny))  # a denormal may be flushed: recorded
    assert_relu_by_select(SPECIAL[normal], custom[normal], what="study_relu on NaN and -0 as given")
    ordinary = normal & (np.isfinite(SPECIAL) & (SPECIAL != 0) | np.isinf(SPECIAL))
    assert_exact(custom[ordinary], builtin[ordinary], what="study_relu vs built-in relu on finite values and ±inf")
