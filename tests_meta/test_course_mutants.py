"""Meta-tests for the course area's checks: an incomplete §14.4 record and a mismatched environment
are rejected."""

import pytest

from stackcheck.evidence import repro


@pytest.mark.meta
@pytest.mark.mutant_for("S14.4-repro")
def test_a_record_without_its_inputs_or_revision_is_caught():
    environment = {
        "date": "d",
        "os": "o",
        "cpu": "c",
        "accelerator": "a",
        "driver": "v",
        "python": "p",
        "versions": {"numpy": "2"},
        "backends": {"torch": "cpu"},
    }
    full = repro.record(
        environment, {"t": {"regime": "host-sync"}}, ["make_inputs(N=2, K=3, M=4, dtype='float32', seed=1)"]
    )
    assert repro.missing(full) == []
    assert repro.missing({**full, "code_revision": ""}) == ["code_revision"]
    assert "input_dtype" in repro.missing(repro.record({**environment}, {}, []) | {"input_dtype": []})


@pytest.mark.meta
@pytest.mark.mutant_for("S14.3-env")
def test_a_mismatched_jaxlib_or_a_wrong_device_is_caught():
    from stackcheck.stacks import compat

    found = {
        "jax": "0.10.2",
        "jaxlib": "0.10.2",
        "minimum_jaxlib": "0.10.0",
        "default_backend": "cpu",
        "first_device": "cpu",
    }
    assert compat.environment_problems(found, set()) == []
    assert "outside what jax" in compat.environment_problems({**found, "jaxlib": "0.9.0"}, set())[0]
    assert "--require cuda, but jax selected cpu" in compat.environment_problems(found, {"cuda"})[0]


@pytest.mark.meta
@pytest.mark.mutant_for("S14.3-env")
def test_a_mojo_that_max_was_not_built_against_and_a_missing_backend_are_caught():
    from stackcheck.stacks import compat

    assert compat.max_mojo_problems({"max": "26.7.0", "mojo_compiler": "1.2.0", "wanted": "1.2.0"}) == []
    assert compat.max_mojo_problems({"max": "26.7.0", "mojo_compiler": "1.3.0", "wanted": "1.2.0"})
    assert compat.torch_compile_problems({"torch": "2", "python": "3.14", "dynamo_supported": False, "backends": []})
