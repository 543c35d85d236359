"""MC11 (§14.1, §10.1): Mojo is a language and OpenXLA a compiler ecosystem; they are not
substitutes at one layer. A Mojo program builds and runs with no graph framework; a MAX graph runs
without loading JAX, a JAX program without loading MAX (counted from after the implementation's own
imports: a homework file that imports jax at its top is not MAX needing JAX). Which layers the two
stacks cover is the suite's own table: tests_plugin/test_layers_table.py checks it."""

import json
import subprocess
import sys

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.paths.tools import mojo_executable

MOJO_RELU = """
def main():
    var values: List[Float32] = [-2.0, -0.5, 0.0, 0.5, 3.0]
    for v in values:
        print(v if v > 0 else Float32(0))
"""
FRAMEWORK_RUN = """
import json, sys
import numpy as np
from stackcheck.impl.loader import Impl, load_module
from stackcheck.evidence.numerics import make_inputs
impl = Impl(load_module({spec!r}))
x, w, b = make_inputs(5, 4, 3, seed=46)
before = {{m.split(".")[0] for m in sys.modules}}  # what the implementation's own imports brought
{body}
print(json.dumps({{"y": np.asarray(y, dtype=np.float64).tolist(),
                  "loaded": sorted(({{m.split(".")[0] for m in sys.modules}} - before) & {{"jax", "jaxlib", "max"}})}}))
"""
BODIES = {
    "max": "from stackcheck.run import max_graphs\ny = max_graphs.execute('math', impl, x, w, b)['y']",
    "jax": "y = impl.jax_forward(x, w, b)",
}


def run_alone(impl, stack: str) -> dict:
    spec = getattr(impl.module, "__file__", None) or "stackcheck.impl.reference"
    done = subprocess.run(
        [sys.executable, "-c", FRAMEWORK_RUN.format(spec=spec, body=BODIES[stack])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"the {stack} program failed:\n{done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.claim("MC11")
@pytest.mark.mojo
def test_a_mojo_program_builds_and_runs_with_no_graph_framework(tmp_path):
    """The `mojo` compiler builds a native program: no Python, no MAX graph, no XLA in the process."""
    source = tmp_path / "relu.mojo"
    source.write_text(MOJO_RELU)
    built = subprocess.run(
        [mojo_executable(), "build", "-o", str(tmp_path / "relu"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    ran = subprocess.run([str(tmp_path / "relu")], capture_output=True, text=True, timeout=60, env={})
    got = np.array([float(v) for v in ran.stdout.split()])
    assert_matches_reference(
        got, np.maximum([-2.0, -0.5, 0.0, 0.5, 3.0], 0), dtype="float32", k=1, what="ReLU by a standalone Mojo program"
    )


@pytest.mark.claim("MC11")
@pytest.mark.max
@pytest.mark.judge_traces("it runs the implementation in a fresh interpreter of its own")
def test_a_max_graph_runs_without_jax(impl):
    result = run_alone(impl, "max")  # Y below shows MAX ran; the implementation may have imported it already
    assert not {"jax", "jaxlib"} & set(result["loaded"]), f"a MAX graph run loaded {result['loaded']}"
    assert_matches_reference(
        np.array(result["y"]),
        reference_forward(*make_inputs(5, 4, 3, seed=46)),
        dtype="float32",
        k=4,
        what="MAX's Y, run alone",
    )


@pytest.mark.claim("MC11")
@pytest.mark.jax
@pytest.mark.judge_traces("it runs the implementation in a fresh interpreter of its own")
def test_a_jax_program_runs_without_max(impl):
    result = run_alone(impl, "jax")
    assert "max" not in result["loaded"], f"a JAX run loaded {result['loaded']}"
    assert_matches_reference(
        np.array(result["y"]),
        reference_forward(*make_inputs(5, 4, 3, seed=46)),
        dtype="float32",
        k=4,
        what="JAX's Y, run alone",
    )


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
    test_a_max_graph_runs_without_jax(Impl(load_module(str(module))))
