"""MC11 (§14.1, §10.1): Mojo is a language and OpenXLA a compiler ecosystem; they are not
substitutes at one layer. A Mojo program builds and runs with no graph framework; a MAX graph runs
without loading JAX, a JAX program without loading MAX (counted from after the implementation's own
imports: a homework file that imports jax at its top is not MAX needing JAX). The layers each stack
takes the learner's forward through are read from what each produces in test_q4_stack_matching.py."""

import subprocess

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.paths.tools import mojo_executable
from stackcheck.run.alone import run_alone

MOJO_RELU = """
def main():
    var values: List[Float32] = [-2.0, -0.5, 0.0, 0.5, 3.0]
    for v in values:
        print(v if v > 0 else Float32(0))
"""


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
