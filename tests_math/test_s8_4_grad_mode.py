"""§8.4: a change of execution condition, such as torch.no_grad, is a new compile; warm up under the
condition you will measure. Compiles per call of the implementation's compiled forward."""

import pytest

from stackcheck.evidence.compiles import assert_matmul_compiled, inductor_code, torch_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import torch_in, torch_out


@pytest.mark.claim("S8.4-grad-mode")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_no_grad_after_a_grad_mode_warm_up_compiles_once_more(impl, stack, device):
    torch = need("torch")
    x, w, b = make_inputs(12, 6, 5, seed=81)
    args = torch_in((x, w, b), device, "float32")
    torch._dynamo.reset()
    counts = []
    for at, grad in enumerate((True, True, False, False)):  # warm-up with grad on, the 'measurement' under no_grad
        with torch.set_grad_enabled(grad), torch_compiles() as count:
            if at == 2:  # the recompile for no_grad (if any: the count decides): the whole forward, matmul included
                y, codes = inductor_code(impl.torch_compiled_forward, *args)
                if codes:
                    assert_matmul_compiled(codes)
            else:
                y = impl.torch_compiled_forward(*args)
        counts.append(count.compiles)
        assert_matches_reference(
            torch_out(y, "float32"),
            reference_forward(x, w, b),
            dtype="float32",
            k=6,
            stack=stack,
            device=device,
            grad_enabled=grad,
        )
    assert counts == [1, 0, 1, 0], (
        f"compiles per call, grad on, on, off, off: {counts}; the first no_grad call compiles anew"
    )


@pytest.mark.claim("S8.4-grad-mode")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_steady_state_warms_up_under_the_condition_it_measures(impl, stack, device):
    """The implementation's steady_state, timing the compiled forward with grad enabled: every call, the
    warm-up's included, runs with grad enabled, and no timed call compiles (a warm-up under no_grad
    leaves the grad-mode compile inside the first sample: the §8.4 mistake)."""
    torch = need("torch")
    x, w, b = make_inputs(12, 6, 5, seed=82)
    args = torch_in((x, w, b), device, "float32")
    torch._dynamo.reset()
    calls = []  # (grad enabled, compiles) per call

    def forward():
        with torch_compiles() as count:
            y = impl.torch_compiled_forward(*args)
        calls.append((torch.is_grad_enabled(), count.compiles))
        return y

    sync = torch.cuda.synchronize if device == "cuda" else None
    with torch.set_grad_enabled(True):
        samples = impl.steady_state(forward, (lambda _: sync()) if sync else None, trials=3, warmup=2)
    assert len(samples) == 3 and len(calls) == 5, f"2 warm-up calls and 3 timed ones: {len(calls)} calls"
    assert {grad for grad, _ in calls} == {True}, f"every call under the measured condition (grad on): {calls}"
    assert [c for _, c in calls[2:]] == [0, 0, 0], f"compiles in the timed calls: {[c for _, c in calls]}"
    assert_matches_reference(
        torch_out(forward(), "float32"), reference_forward(x, w, b), dtype="float32", k=6, stack=stack, device=device
    )
