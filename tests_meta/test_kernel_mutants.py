"""Meta-tests: each claim test of tests_kernels fails against a wrong kernel, wrapper or program."""
import pytest

from stackcheck import mojo_build
from stackcheck.timing import Measurement, not_faster_somewhere
from tests_meta.conftest import assert_caught, mutant_cases

MUTANTS = [
    ("unmasked_kernel", "tests_kernels/test_s11_2_mask.py", "S11.2-mask", "boundary"),
    ("bias_by_row", "tests_kernels/test_s11_2_mask.py", "S11.2-mask", "boundary"),
    ("identity_relu_kernel", "tests_kernels/test_s11_2_mask.py", "S11.2-mask", "boundary"),
    ("trusting_wrapper", "tests_kernels/test_s11_2_guard.py", "S11.2-guard", None),
    ("floor_grid", "tests_kernels/test_s11_3_program.py", "S11.3-program", None),
    ("all_in_torch", "tests_kernels/test_s11_4_scope.py", "S11.4-scope", None),
    ("misnamed_custom_op", "tests_kernels/test_s10_4_custom.py", "S10.4-custom", "equals"),
]


@pytest.mark.meta
@mutant_cases(MUTANTS)
def test_mutant_is_caught(run_with_mutant, mutant, test_file, claim, selection):
    assert_caught(run_with_mutant(test_file, mutant, selection), mutant, claim)


GUARD = "    if tid < ELEMENTS:"


@pytest.mark.meta
@pytest.mark.mojo
def test_ptx_check_catches_a_kernel_without_bounds_check(tmp_path):
    """S10.5's PTX check, on the program with its `if tid < ELEMENTS` removed (body dedented)."""
    lines = mojo_build.source("bias_relu_gpu.mojo").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(GUARD))
    mutant = lines[:at] + [line[4:] for line in lines[at + 1:at + 3]] + lines[at + 3:]
    src = tmp_path / "unguarded_bias_relu.mojo"
    src.write_text("\n".join(mutant) + "\n")
    ptx = mojo_build.kernel_ptx(src, "bias_relu", {"N": 33, "M": 65})
    assert mojo_build.guard_problems(ptx, 33 * 65), "the unguarded kernel passed the bounds-check inspection"


def _runs(**medians_ms):
    return {name: Measurement(name, "device-events", [ms / 1e3] * 5) for name, ms in medians_ms.items()}


@pytest.mark.meta
def test_mc10_decision_needs_a_regime_where_the_kernel_is_not_faster():
    """MC10's decision, on a custom kernel that is faster everywhere, finds nothing to pass on."""
    everywhere_faster = {"tiny": _runs(triton=1.0, eager=3.0), "large": _runs(triton=1.0, eager=2.0)}
    assert not_faster_somewhere(everywhere_faster, "triton", 1.1, {"tiny": 1.0, "large": 1.0}) == []
    slower_when_tiny = {"tiny": _runs(triton=5.0, eager=3.0), "large": _runs(triton=1.0, eager=2.0)}
    assert not_faster_somewhere(slower_when_tiny, "triton", 1.1, {"tiny": 1.0, "large": 1.0}) == ["tiny"]
    assert not_faster_somewhere(slower_when_tiny, "triton", 1.1, {"tiny": 1.5, "large": 1.0}) == [], (
        "a regime noisier than the margin decides nothing")
