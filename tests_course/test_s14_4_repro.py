"""§14.4: a measurement is reported with what it ran on and how: fifteen fields, from the date to
the code revision. Every piece of evidence the suite records carries them."""
import pytest

from stackcheck import repro, timing
from stackcheck.numerics import assert_matches_reference, make_inputs, reference_forward


@pytest.mark.claim("S14.4-repro")
@pytest.mark.numpy
def test_a_timing_carries_all_fifteen_fields(impl, evidence):
    x, w, b = make_inputs(64, 32, 16, seed=144)
    runs = timing.interleaved({"forward": timing.host_timer(lambda: impl.numpy_forward(x, w, b))}, "host-sync",
                              trials=5, warmup=1)
    recorded = evidence(forward=runs["forward"].summary())["repro"]
    assert repro.missing(recorded) == [], f"§14.4 fields without a value: {repro.missing(recorded)}"
    assert recorded["input_shape"] == ["X[64,32] W[32,16] b[16]"] and recorded["input_dtype"] == ["float32"]
    assert recorded["first_call_included"] is False and recorded["transfers_included"] is False
    assert "synchronize" in recorded["sync"][0] and recorded["code_revision"] == repro.code_revision()
    assert_matches_reference(impl.numpy_forward(x, w, b), reference_forward(x, w, b), dtype="float32", k=32)
