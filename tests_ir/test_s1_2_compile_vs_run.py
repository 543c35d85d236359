"""§1.2: compiling prepares how to run; running applies it to data. The compiler knows shapes and
dtypes, not values (S1.2-abstract); constants and static arguments do enter compilation (S1.2-static)."""

import re

import pytest

from stackcheck.evidence.compiles import jax_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.judges import assert_torch_math_ops
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_device, jax_in, jax_out
from stackcheck.toolchains import ir

SHAPES = (8, 4, 3)


@pytest.mark.claim("S1.2-abstract")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_compiles_from_shapes_and_dtypes_alone(impl, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(*SHAPES, seed=12)
    # no value anywhere: shapes, a dtype, and the device it will run on (a GPU host's default is its GPU)
    placed = jax.sharding.SingleDeviceSharding(jax_device(device))
    specs = [jax.ShapeDtypeStruct(v.shape, jax.numpy.float32, sharding=placed) for v in (x, w, b)]
    compiled = jax.jit(impl.jax_forward).lower(*specs).compile()
    text = compiled.as_text()
    assert re.search(r'\bdot\(|custom_call_target="[^"]*(cublas|gemm|matmul)', text, re.I), (
        "the program, its matmul included, exists before any data does"
    )
    callbacks = re.findall(r'custom_call_target="([^"]*callback[^"]*)"', text)
    assert not callbacks, f"the device program calls back into Python on the host: {callbacks}"
    y = compiled(*jax_in((x, w, b), device, "float32"))  # data arrives only now
    assert_matches_reference(
        jax_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=SHAPES[1], stack=stack, device=device
    )


@pytest.mark.claim("S1.2-abstract")
@pytest.mark.parametrize("stack, device", stack_params("torch", devices=("cpu",)))
def test_torch_export_traces_on_fake_tensors(impl, stack, device):
    """torch.export traces on fake tensors: shapes and dtypes, no storage, no values."""
    torch = need("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Forward(torch.nn.Module):
        def forward(self, x, w, b):
            return impl.torch_forward(x, w, b)

    x, w, b = make_inputs(*SHAPES, seed=13)
    with FakeTensorMode():
        fakes = tuple(torch.empty(v.shape) for v in (x, w, b))
        exported = torch.export.export(Forward(), fakes)
    real = tuple(torch.from_numpy(v) for v in (x, w, b))
    module = exported.module()
    assert_torch_math_ops(ir.core_aten(module, *real), real, ["matmul", "add", "relu"], "torch.export on fakes")
    y = module(*real)
    assert_matches_reference(
        y.numpy(), reference_forward(x, w, b), dtype="float32", k=SHAPES[1], stack=stack, device=device
    )


def main_parameters(stablehlo: str) -> int:
    signature = re.search(r"func\.func public @main\(([^)]*)\)", stablehlo)
    return len(re.findall(r"%arg\d+:", signature.group(1))) if signature else -1


@pytest.mark.claim("S1.2-static")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_closed_over_w_is_a_constant_and_a_passed_w_a_parameter(impl, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(*SHAPES, seed=14)
    xj, wj, bj = jax_in((x, w, b), device, "float32")
    passed = jax.jit(impl.jax_forward).lower(xj, wj, bj).as_text()
    closed = jax.jit(lambda p, q: impl.jax_forward(p, wj, q)).lower(xj, bj)
    text = closed.as_text()
    assert (main_parameters(passed), main_parameters(text)) == (3, 2), (
        "W passed in is a program parameter; closed over, it is not: "
        f"{main_parameters(passed)} vs {main_parameters(text)}"
    )
    k, m = SHAPES[1:]
    assert re.search(rf"stablehlo\.constant dense<[^>]*> : tensor<{k}x{m}xf32>", text), (
        f"the closed-over W[{k}, {m}] is baked into the program as a constant:\n{text}"
    )
    y = closed.compile()(xj, bj)
    assert_matches_reference(
        jax_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=k, stack=stack, device=device
    )


@pytest.mark.claim("S1.2-static")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_new_static_argument_recompiles_and_is_a_constant(impl, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(*SHAPES, seed=15)
    args = jax_in((x, w, b), device, "float32")
    scaled = jax.jit(lambda p, q, r, scale: impl.jax_forward(p * scale, q, r), static_argnums=3)
    counts = []
    for scale in (2.0, 2.0, 3.0):
        with jax_compiles() as count:
            y = scaled(*args, scale)
        counts.append(count.compiles)
        assert_matches_reference(
            jax_out(y, "float32"),
            reference_forward(x * scale, w, b),
            dtype="float32",
            k=SHAPES[1],
            stack=stack,
            device=device,
            scale=scale,
        )
    assert counts == [1, 0, 1], f"compiles per call for scale = 2, 2, 3: {counts}"
    assert re.search(r"constant dense<3\.0+e\+00>", scaled.lower(*args, 3.0).as_text()), (
        "the static scale is a constant of the program"
    )
