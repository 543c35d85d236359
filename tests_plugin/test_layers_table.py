"""The suite's layer table (stackcheck.claims.layers, course §12.1) and Checkpoint 4's answer key are
the suite's own data: these self-tests hold them to each other and to the installed stacks. They prove
nothing about the course on their own; Q4's and MC11's claim tests observe the stacks."""

import pytest

from stackcheck.claims import layers
from stackcheck.homework import checkpoints
from stackcheck.paths.tools import mojo_executable
from stackcheck.stacks import available

pytestmark = pytest.mark.meta


def q4_key() -> dict:
    return checkpoints.key()["Q4"]


def test_checkpoint_4s_key_agrees_with_the_layer_table():
    layers.assert_key_matches(q4_key())


def test_a_key_that_calls_inductor_the_capture_is_caught():
    layers.assert_key_matches({"Dynamo": "capture", "Inductor": "compiler"})
    with pytest.raises(AssertionError, match="Inductor"):
        layers.assert_key_matches({"Dynamo": "capture", "Inductor": "capture"})


@pytest.mark.max
@pytest.mark.jax
def test_max_and_mojo_together_cover_the_layers_xla_does():
    """Mojo alone is one layer (a kernel language); MAX + Mojo span what JAX + XLA span, and every
    component the table names is exposed by the installed stack."""
    assert set(layers.LAYERS["mojo"]) == {"kernel language"}
    assert set(layers.LAYERS["max"]) | set(layers.LAYERS["mojo"]) == set(layers.LAYERS["jax"])
    for stack in ("max", "jax"):
        for layer, (component, where) in layers.LAYERS[stack].items():
            assert layers.exposed(where) is not None, f"{stack} {layer}: {component} at {where}"
    assert mojo_executable() or available.stack_missing("mojo"), "the Mojo layer is the mojo compiler"
