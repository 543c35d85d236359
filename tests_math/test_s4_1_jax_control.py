"""§4.1: a compiler must know whether control flow depends on data. Under jax.jit a Python `if` on a
traced value cannot be decided (it raises); lax.cond puts the branch in the program; an ordered
io_callback keeps the host side effects in program order."""

import re

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir

SHAPE = (8, 4, 3)


@pytest.mark.claim("S4.1-jax-control")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_python_if_on_a_traced_value_raises_and_lax_cond_compiles(impl, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(*SHAPE, seed=51)
    args = jax_in((x, w, b), device, "float32")

    def python_if(p, q, r):
        y = impl.jax_forward(p, q, r)
        return y if y.sum() > 0 else -y  # the value is unknown while tracing

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(python_if)(*args)

    def with_cond(p, q, r):
        y = impl.jax_forward(p, q, r)
        return jax.lax.cond(y.sum() > 0, lambda v: v, lambda v: -v, y)  # the branch is part of the program

    stages = ir.jax_stages(with_cond, *args)
    assert re.search(r"\bstablehlo\.(case|if)\b", stages["stablehlo"]), "lax.cond lowers to a conditional op"
    y = stages["compiled"](*args)
    expected = reference_forward(x, w, b)
    assert_matches_reference(
        jax_out(y, "float32"),
        expected if expected.sum() > 0 else -expected,
        dtype="float32",
        k=SHAPE[1],
        stack=stack,
        device=device,
    )


@pytest.mark.claim("S4.1-jax-control")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_an_ordered_callback_keeps_program_order(impl, stack, device):
    jax = need("jax")
    from jax.experimental import io_callback

    x, w, b = make_inputs(*SHAPE, seed=52)
    seen = []

    def record(step, total):
        seen.append((int(step), float(total)))
        return np.int32(0)

    def reporting(ordered: bool):
        def layers(p, q, r):
            y = p
            for step in range(3):  # three layers, each reporting what no other report reads: only an order
                y = impl.jax_forward(y, q, r) @ q.T  # the program itself keeps them in sequence
                io_callback(record, jax.ShapeDtypeStruct((), np.int32), step, p.sum() * step, ordered=ordered)
            return y

        return layers

    args = jax_in((x, w, b), device, "float32")
    out = jax.jit(reporting(True))(*args)
    jax.block_until_ready(out)
    assert [s for s, _ in seen] == [0, 1, 2], f"the host saw the callbacks out of order: {seen}"
    ordered, unordered = (jax.jit(reporting(o)).lower(*args).as_text() for o in (True, False))
    judges.assert_callbacks_ordered_by_the_program(ordered, unordered, callbacks=3)
    expected = x
    for _ in range(3):
        expected = reference_forward(expected, w, b) @ w.T.astype(np.float64)
    assert_matches_reference(
        jax_out(out, "float32"), expected, dtype="float32", k=SHAPE[1] * 3, stack=stack, device=device
    )
