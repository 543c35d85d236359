"""§14.4: a measurement is reported with what it ran on and how: fifteen fields, from the date to
the code revision. Every piece of evidence the suite records carries them, and a field is there
because it changes the number: the implementation's forward, timed at two input shapes, gives
numbers that differ by far more than their noise, and their records differ in the shape."""

import re

import pytest

from stackcheck.evidence import judged, repro, timing
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import torch_in, torch_out


@pytest.mark.claim("S14.4-repro")
@pytest.mark.numpy
def test_a_timing_carries_all_fifteen_fields(impl, evidence):
    x, w, b = make_inputs(64, 32, 16, seed=144)
    runs = timing.interleaved(
        {"forward": timing.host_timer(lambda: impl.numpy_forward(x, w, b))}, "host-sync", trials=5, warmup=1
    )
    recorded = evidence(forward=runs["forward"].summary())["repro"]
    assert repro.missing(recorded) == [], f"§14.4 fields without a value: {repro.missing(recorded)}"
    assert recorded["input_shape"] == ["X[64,32] W[32,16] b[16]"] and recorded["input_dtype"] == ["float32"]
    assert recorded["first_call_included"] is False and recorded["transfers_included"] is False
    assert "synchronize" in recorded["sync"][0] and recorded["code_revision"] == repro.code_revision()
    assert_matches_reference(impl.numpy_forward(x, w, b), reference_forward(x, w, b), dtype="float32", k=32)


SHAPE_LINE = 4.0  # 256^3 against 32x16x8: 4096x the multiply-adds; the line far below what any machine measures


@pytest.mark.claim("S14.4-repro")
@pytest.mark.numpy
def test_the_shape_field_separates_numbers_that_differ(impl, evidence):
    """Two timings of the same forward that differ in one recorded field (the input shape) are numbers
    no one may compare: they differ by far more than their noise, and the record names both shapes."""
    small, large = make_inputs(32, 16, 8, seed=146), make_inputs(256, 256, 256, seed=147)
    timers = {
        "small": timing.host_timer(lambda: impl.numpy_forward(*small)),
        "large": timing.host_timer(lambda: impl.numpy_forward(*large)),
    }
    runs = timing.interleaved(timers, "host-sync", trials=9, warmup=2)
    ratio = timing.ratio(runs["large"], runs["small"])
    noise = max(timing.scatter(runs["small"]), timing.scatter(runs["large"]))
    recorded = evidence(
        **{name: m.summary() for name, m in runs.items()},
        large_over_small=round(ratio, 1),
        judged=[judged.line("large over small, one field apart", ratio, at_least=SHAPE_LINE)],
    )["repro"]
    assert recorded["input_shape"] == ["X[32,16] W[16,8] b[8]", "X[256,256] W[256,256] b[256]"]
    if ratio < SHAPE_LINE and 2 * noise >= SHAPE_LINE:
        pytest.skip(f"inconclusive: large over small {ratio:.2f}, its noise {noise:.2f} too high to judge")
    assert ratio >= SHAPE_LINE, (
        f"the forward at 256^3 took {ratio:.2f}x its time at 32x16x8 (noise {noise:.2f}): about the same "
        "time for 4096x the work, so the timing did not measure the work its record names"
    )
    for arrays in (small, large):
        assert_matches_reference(impl.numpy_forward(*arrays), reference_forward(*arrays), dtype="float32", k=256)


@pytest.mark.claim("S14.4-repro")
@pytest.mark.parametrize("stack, device", stack_params("torch", devices=("cuda",)))
def test_a_gpu_timing_names_the_gpu_and_its_driver(impl, evidence, stack, device):
    """On a GPU the fields that differ most between machines are the accelerator and its driver: the
    timing's record names the GPU torch ran on and the driver version nvidia-smi reports."""
    torch = need("torch")
    x, w, b = make_inputs(64, 32, 16, seed=145)
    xt, wt, bt = torch_in((x, w, b), device, "float32")
    timer = timing.host_timer(lambda: impl.torch_forward(xt, wt, bt), lambda _: torch.cuda.synchronize())
    runs = timing.interleaved({"forward": timer}, "host-sync", trials=5, warmup=1)
    recorded = evidence(forward=runs["forward"].summary())["repro"]
    assert repro.missing(recorded) == [], f"§14.4 fields without a value: {repro.missing(recorded)}"
    assert torch.cuda.get_device_name(xt.device) in recorded["accelerator"], (
        f"the record names {recorded['accelerator']!r}, but torch ran on {torch.cuda.get_device_name(xt.device)!r}"
    )
    assert re.fullmatch(r"\d+(\.\d+)+", recorded["driver"]), f"the driver field is {recorded['driver']!r}"
    assert "synchronize" in recorded["sync"][0] and recorded["input_dtype"] == ["float32"]
    assert_matches_reference(
        torch_out(impl.torch_forward(xt, wt, bt), "float32"),
        reference_forward(x, w, b),
        dtype="float32",
        k=32,
        stack=stack,
        device=device,
    )
