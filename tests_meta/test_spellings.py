"""Issue 51: correct work in any spelling passes, by construction. Hypothesis composes spellings of the
forward (stackcheck/claims/spellings.py: matmul x bias add x ReLU x form x where the jit sits x how the
module was loaded) for NumPy, torch and JAX, writes each as an --impl module, and runs the claim tests it
reaches on it: the test functions themselves, called in this process with their fixtures' values (a
fresh pytest per example would cost seconds each). Every correct spelling passes all of them; the same
grammar with one wrong part (a ReLU that is abs, leaky or NaN-dropping, a bias subtracted or left out)
fails a test of the claim its mistake is about. Derandomized: the same examples every run."""

from __future__ import annotations

import importlib
import itertools
import sys
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from stackcheck.claims.spellings import (
    CAUGHT_BY,
    TRITON_CAUGHT_BY,
    importable,
    spellings,
    triton_spellings,
    wrong_kinds,
)
from stackcheck.evidence.numerics import make_inputs
from stackcheck.impl.loader import Impl, load_module
from stackcheck.paths import data

# Examples a run draws, per family: at least 200 correct spellings in all, and the wrong ones.
EXAMPLES = {"numpy": 120, "torch": 40, "jax": 50, "triton": 24}
WRONG_EXAMPLES = {"numpy": 12, "torch": 16, "jax": 12, "triton": 12}
FORWARD_STACKS = ("numpy", "torch", "jax")  # spellings of the forward; triton's are of the §11.2 kernel
DRAWN: dict[str, int] = {}
COUNTER = itertools.count()


# The claim tests each stack's spelling reaches: (claim, "FOLDER/MODULE::TEST" of tests_FOLDER, its arguments
# after impl). Placeholders: STACK (the stack), HAND (§2.2's example), INPUTS (tests_ir's X[64, 32], W, b as NumPy),
# TENSORS (the same as the stack's arrays, on the CPU), EVIDENCE (the evidence fixture), HERE (the CPU, for a
# test of TENSORS), LAUNCHES (the launches fixture); "cpu" is the device, "cuda" in the GPU half.
REACHED = {
    "all": [
        ("S2.2-hand", "math/test_s2_2_hand::test_hand_example_a_z_y_exact", ("HAND", "STACK", "cpu")),
        ("X-numerics", "math/test_x_relu_edges::test_relu_is_exact_at_the_edges", ("STACK", "cpu", "float32")),
        ("X-numerics", "math/test_x_relu_edges::test_relu_keeps_nan", ("STACK", "cpu", "float32")),
        ("S2.1-shapes", "math/test_s2_1_shapes::test_output_is_n_by_m_and_k_is_contracted", ("STACK", "cpu", 3, 5, 2)),
        ("S2.1-shapes", "math/test_s2_1_shapes::test_k_mismatch_is_a_shape_error_naming_both_shapes", ("STACK", "cpu")),
    ],
    "torch": [
        ("S4.3-ir", "ir/test_s4_3_ir::test_torch_export_aten_graph", ("TENSORS", "INPUTS")),
        ("S4.3-ir", "ir/test_s4_3_ir::test_dynamo_fx_graph_from_a_recording_backend", ("TENSORS", "INPUTS")),
        ("S8.3-export-vs-dynamo", "ir/test_s8_3_export_vs_dynamo::test_export_and_dynamo_graphs_differ_in_level",
         ("TENSORS", "INPUTS")),
        ("S1.2-abstract", "ir/test_s1_2_compile_vs_run::test_torch_export_traces_on_fake_tensors", ("STACK", "cpu")),
        ("S5.2-fusion", "ir/test_s5_2_fusion::test_inductor_fuses_bias_and_relu_after_a_library_matmul",
         ("TENSORS", "INPUTS", "EVIDENCE", "HERE")),
        ("Q1", "ir/test_q1_buffers::test_inductor_allocates_one_buffer_where_eager_writes_each_step",
         ("TENSORS", "INPUTS", "EVIDENCE")),
    ],
    "jax": [
        ("S4.3-ir", "ir/test_s4_3_ir::test_jaxpr_and_stablehlo", ("TENSORS", "INPUTS", "jaxpr")),
        ("S4.3-ir", "ir/test_s4_3_ir::test_jaxpr_and_stablehlo", ("TENSORS", "INPUTS", "stablehlo")),
        ("S12.4-dynamic", "runtime/test_s12_4_shapes::test_jax_jit_compiles_once_per_n", ("STACK", "cpu")),
        ("S2.4-specialize", "math/test_s2_4_specialize::test_jax_steps_is_one_program_compiled_once", ("STACK", "cpu")),
        ("S9.3-hlo", "ir/test_s9_3_hlo::test_each_stage_is_its_own_layer", ("TENSORS", "INPUTS", "STACK", "HERE")),
        ("S5.2-fusion", "ir/test_s5_2_fusion::test_xla_fuses_add_and_maximum",
         ("TENSORS", "INPUTS", "EVIDENCE", "HERE")),
        ("MC02", "ir/test_mc02_ir_vs_machine_code::test_stablehlo_is_tensor_ops", ("TENSORS", "INPUTS")),
        ("S3.1-decompose", "ir/test_s3_1_decompose::test_a_transformer_block_is_matmuls_reductions_exp_div_and_adds",
         ("STACK", "cpu")),
    ],
    "triton": [  # the kernel's own claims, on the interpreter: sizes around the blocks, and the grid it launched
        ("S11.2-mask", "kernels/test_s11_2_mask::check_in_bounds", ("cpu", 33, 65, 16)),
        ("S11.2-mask", "kernels/test_s11_2_mask::check_in_bounds", ("cpu", 7, 13, 64)),
        ("S11.2-mask", "kernels/test_s11_2_mask::check_in_bounds", ("cpu", 3, 341, 64)),
        ("S11.3-program", "kernels/test_s11_3_program::test_the_grid_is_cdiv_n_block_size_programs",
         ("LAUNCHES", "cpu", 33, 65, 256)),
        ("S11.3-program", "kernels/test_s11_3_program::test_the_grid_is_cdiv_n_block_size_programs",
         ("LAUNCHES", "cpu", 4, 64, 256)),
    ],
}  # fmt: skip


def hand_example() -> dict:
    with open(data.path("fixtures", "hand_example.toml"), "rb") as f:
        values = tomllib.load(f)
    return {k: (np.asarray(v, dtype=np.float32) if isinstance(v, list) else v) for k, v in values.items()}


def argument(placeholder, stack: str):
    inputs = make_inputs(64, 32, 16, seed=0)  # tests_ir/conftest.py's example_inputs
    if placeholder == "TENSORS":
        to_stack = (
            importlib.import_module("torch").from_numpy
            if stack == "torch"
            else importlib.import_module("jax.numpy").asarray
        )
        return tuple(to_stack(v) for v in inputs)
    if placeholder == "EVIDENCE":  # the evidence fixture: what it records is not what is judged here
        return lambda **numbers: numbers
    if placeholder == "HERE":  # the device a test of CPU tensors names in its evidence
        return "cpu"
    return {"STACK": stack, "HAND": hand_example(), "INPUTS": inputs}.get(placeholder, placeholder)


# Judged on the CPU half only: how many programs JAX compiles is its cache's logic, the same on every
# backend (and the wrong form is caught by a compile count).
COMPILE_COUNTS = {"S2.4-specialize", "S12.4-dynamic"}


def checks(stack: str, device: str = "cpu"):
    """``(name, claim, call(impl))`` for each claim test a spelling of ``stack`` reaches on ``device``: on a
    GPU, the tests that run on the device they are given (an IR read from CPU tensors is the CPU half's)."""
    for claim, where, args in (REACHED["all"] if stack in FORWARD_STACKS else []) + REACHED.get(stack, []):
        if device != "cpu" and ("cpu" not in args or claim in COMPILE_COUNTS):
            continue
        args = tuple(device if v == "cpu" else v for v in args)
        folder, test = where.split("::")
        function = getattr(importlib.import_module("tests_" + folder.replace("/", ".")), test)
        yield f"{test}{list(args)}", claim, lambda impl, f=function, a=args: called(f, impl, a, stack)


def called(test, impl, args, stack):
    """``test(impl, *args)``, a LAUNCHES placeholder given the grids launched meanwhile (the fixture's)."""
    from stackcheck.toolchains import triton_kernels

    with triton_kernels.recorded_launches() as grids:
        return test(impl, *(((lambda: list(grids)) if v == "LAUNCHES" else argument(v, stack)) for v in args))


def judge(spelling, folder, enough: set[str] = frozenset(), device: str = "cpu") -> dict[str, str]:
    """Each reached test's failure on ``spelling`` (its module written into ``folder``), by test: {} if all pass.
    Stops at the first failure of a claim in ``enough`` (a wrong spelling's is all that is asked)."""
    name = f"spelling_{next(COUNTER)}"
    path = spelling.write(folder, name)
    impl = Impl(load_module(str(path)))
    failed = {}
    for test, claim, call in checks(spelling.stack, device):
        try:
            call(impl)
        except BaseException as error:  # a skip is no pass either: every stack here is installed
            failed[test] = f"[{claim}] {type(error).__name__}: {str(error)[:600]}"
            if claim in enough:
                break
    for loaded in (name, f"{name}_defs", f"stackcheck_impl_{name}"):
        sys.modules.pop(loaded, None)
    return failed


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    with importable(tmp_path_factory.mktemp("spellings")) as path:
        yield path


def run_examples(stack: str, wrong: str | None, count: int, folder, verdict, device: str = "cpu") -> None:
    """Judge ``count`` spellings of ``stack`` (with ``wrong`` the mistaken part) on ``device`` by
    ``verdict(spelling, failed)``."""
    family = "-".join([stack, *([wrong] if wrong else []), *([device] if device != "cpu" else [])])

    strategy = triton_spellings(wrong) if stack == "triton" else spellings(stack, wrong)

    @settings(max_examples=count, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def each(spelling):
        DRAWN[family] = DRAWN.get(family, 0) + 1
        verdict(spelling, judge(spelling, folder, caught_by(stack, wrong), device))

    each()
    kind = "failed its claim" if wrong else "passed every test it reaches"
    print(f"spellings {family}: {DRAWN.get(family, 0)} drawn, each {kind}")  # the summary (-rP shows it)


def correct(spelling, failed: dict) -> None:
    assert not failed, f"{spelling} is correct and failed:\n" + "\n".join(f"{t}: {e}" for t, e in failed.items())


@pytest.mark.meta
@pytest.mark.parametrize("stack", sorted(EXAMPLES))
def test_every_correct_spelling_passes_the_tests_it_reaches(stack, folder):
    pytest.importorskip(stack)
    run_examples(stack, None, EXAMPLES[stack], folder, correct)
    assert DRAWN[stack] >= EXAMPLES[stack], f"{stack}: drew {DRAWN[stack]} of {EXAMPLES[stack]} examples"


def caught_by(stack: str, wrong: str | None) -> set[str]:
    """The claims whose tests must catch a spelling of ``stack`` wrong in its ``wrong`` part."""
    return (TRITON_CAUGHT_BY if stack == "triton" else CAUGHT_BY).get(wrong, set())


WRONG_PAIRS = [(stack, kind) for stack in FORWARD_STACKS for kind in wrong_kinds(stack)]
WRONG_PAIRS += [("triton", kind) for kind in sorted(TRITON_CAUGHT_BY)]


@pytest.mark.meta
@pytest.mark.parametrize("stack, wrong", WRONG_PAIRS)
def test_a_spelling_with_one_wrong_part_fails_its_claim(stack, wrong, folder):
    pytest.importorskip(stack)
    expected = caught_by(stack, wrong)

    def caught(spelling, failed: dict) -> None:
        claims = {e[1 : e.index("]")] for e in failed.values()}
        assert claims & expected, (
            f"{spelling} is wrong in its {wrong} and must fail a test of {sorted(expected)}; failed: "
            + (", ".join(f"{t} {e[:200]}" for t, e in failed.items()) or "nothing")
        )

    run_examples(stack, wrong, WRONG_EXAMPLES[stack] // 2, folder, caught)


# The GPU half: the same grammar on CUDA (the compiled Triton kernel, torch and JAX on the GPU).
GPU_EXAMPLES = {"torch": 20, "jax": 20, "triton": 16}


@pytest.mark.meta
@pytest.mark.cuda
@pytest.mark.parametrize("stack", sorted(GPU_EXAMPLES))
def test_every_correct_spelling_passes_on_the_gpu(stack, folder):
    pytest.importorskip(stack)
    run_examples(stack, None, GPU_EXAMPLES[stack], folder, correct, device="cuda")
    assert DRAWN[f"{stack}-cuda"] >= GPU_EXAMPLES[stack]


@pytest.mark.meta
@pytest.mark.cuda
@pytest.mark.parametrize("stack, wrong", [p for p in WRONG_PAIRS if p[0] in GPU_EXAMPLES and p[1] != "form"])
def test_a_wrong_spelling_fails_its_claim_on_the_gpu(stack, wrong, folder):
    pytest.importorskip(stack)
    expected = caught_by(stack, wrong)

    def caught(spelling, failed: dict) -> None:
        claims = {e[1 : e.index("]")] for e in failed.values()}
        assert claims & expected, f"{spelling} on cuda must fail a test of {sorted(expected)}; failed: {failed}"

    run_examples(stack, wrong, 4, folder, caught, device="cuda")
