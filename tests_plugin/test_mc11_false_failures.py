"""MC11's run-alone tests judge what a MAX or JAX run loads, not what the implementation's file
imports: two false failures that once failed a correct homework, as self-tests (each runs an
implementation in a fresh interpreter of its own)."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run.alone import run_alone


@pytest.mark.meta
@pytest.mark.max
def test_an_implementation_that_imports_jax_itself_is_not_max_needing_jax(tmp_path):
    """The false failure of issue 24: a homework file with ``import jax`` at its top failed "a MAX graph
    runs without JAX". What the file imports is not what the MAX run loads."""
    from stackcheck.impl.loader import Impl, load_module

    module = tmp_path / "imports_jax.py"
    module.write_text("import jax  # noqa: F401\n\nfrom stackcheck.impl.reference import max_steps  # noqa: F401\n")
    assert run_alone(Impl(load_module(str(module))), "max")["loaded"] == ["max"]


@pytest.mark.meta
@pytest.mark.max
def test_an_implementation_that_imports_max_itself_runs_its_graph_without_jax(tmp_path):
    """A second false failure of the kind: a file with ``from max.graph import ops`` at its top (where
    a student's mojo_relu naturally starts) failed "a MAX graph runs without JAX", which required the
    run to load MAX itself."""
    from stackcheck.impl.loader import Impl, load_module

    module = tmp_path / "imports_max.py"
    module.write_text("from max.graph import ops\n\nfrom stackcheck.impl.reference import max_steps\n")
    result = run_alone(Impl(load_module(str(module))), "max")
    assert not {"jax", "jaxlib"} & set(result["loaded"]), f"a MAX graph run loaded {result['loaded']}"
    assert_matches_reference(
        np.array(result["y"]), reference_forward(*make_inputs(5, 4, 3, seed=46)), dtype="float32", k=4
    )
