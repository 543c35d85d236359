"""--impl: a student's module replaces the names it provides; the rest falls back to the reference."""

import pytest

from stackcheck.evidence.numerics import make_inputs

pytestmark = pytest.mark.meta

HOMEWORK = """
import numpy as np

def numpy_steps(x, w, b):   # homework with a bug: ReLU written as abs
    a = x @ w
    z = a + b
    return a, z, np.abs(z)
"""


def test_impl_from_a_file_replaces_only_what_it_provides(pytester, suite_file):
    homework = pytester.makepyfile(homework=HOMEWORK)
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"),
        "-k",
        "numpy-cpu or torch-cpu",
        "-p",
        "no:cacheprovider",
        "--impl",
        str(homework),
    )
    result.assert_outcomes(failed=1, passed=1)  # numpy uses the homework, torch falls back
    result.stdout.fnmatch_lines(
        ["*implementations: stackcheck_impl_homework provides numpy_steps*", "*FAILED*numpy-cpu*"]
    )


def test_unknown_impl_module_is_a_clear_error(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("--impl", "no_such_module_xyz", "-p", "no:cacheprovider")
    assert result.ret != pytest.ExitCode.OK
    assert "no_such_module_xyz" in result.stdout.str() + result.stderr.str()


BAD_IMPL = {
    "syntax error": (
        "homework.py",
        "def numpy_steps(x, w, b)\n    return x\n",
        "ERROR: --impl homework.py: homework.py:1: SyntaxError: *",
    ),
    "missing file": (None, None, "*--impl nowhere.py: no such file*"),
    "folder": ("folder", None, "*--impl folder: is a folder; give the .py file*"),
    "raises on import": (
        "raising.py",
        "import numpy\nraise RuntimeError('boom')\n",
        "*raising.py:2: importing it raised RuntimeError: boom*",
    ),
    "imports a missing package": (
        "needy.py",
        "import no_such_package_abc\n",
        "*it imports 'no_such_package_abc', which is not installed*",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_IMPL))
def test_bad_impl_is_one_clear_line_not_an_internal_error(pytester, case):
    name, text, expected = BAD_IMPL[case]
    pytester.makepyfile("def test_x():\n    pass\n")
    spec = "nowhere.py"
    if name == "folder":
        (pytester.path / name).mkdir()
        spec = name
    elif name:
        (pytester.path / name).write_text(text)
        spec = name
    result = pytester.runpytest_inprocess("--impl", spec, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    errors = [line for line in result.errlines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.errlines
    result.stderr.fnmatch_lines([expected])


def test_reference_surface_is_documented():
    from stackcheck.impl import reference
    from stackcheck.impl.loader import SURFACE

    assert {"check_operands", "numpy_forward", "numpy_steps", "torch_forward", "broadcast_bias"} <= set(SURFACE)
    for name in SURFACE:
        assert f"``{name}" in reference.__doc__, f"{name} is missing from the surface table in reference.py"


def test_a_fallback_traced_by_torch_compile_calls_the_students_check(tmp_path, monkeypatch):
    """A student's own check_operands (or one imported from the reference) is what the fallback
    torch_forward calls, also inside torch.compile: Dynamo guards the fallback's globals through their
    module, which used to be the reference's, and failed five torch.compile tests with an internal
    error ('NoneType' object is not subscriptable) for work that was right."""
    torch = pytest.importorskip("torch")
    from stackcheck.impl.loader import Impl, load_module

    (tmp_path / "own_check.py").write_text(
        "calls = []\n"
        "def check_operands(x, w, b):\n"
        "    calls.append(tuple(x.shape))\n"
        "    if x.shape[1] != w.shape[0]:\n"
        "        raise ValueError('K mismatch')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    student = load_module("own_check")
    impl = Impl(student)

    def forward(x, w, b):
        return impl.torch_forward(x, w, b)

    x, w, b = (torch.from_numpy(v) for v in make_inputs(4, 8, 3, seed=7))
    y = torch.compile(forward, dynamic=False, backend="eager")(x, w, b)
    assert student.calls == [(4, 8)], "the fallback ran the student's check while Dynamo traced it"
    torch.testing.assert_close(y, torch.relu(x @ w + b))


@pytest.mark.parametrize(
    "shape, message, named",
    [
        ((2, 3), "X has shape [2, 3]", True),
        ((2, 3), "X has shape (2, 3)", True),
        ((2, 3), "torch.Size([2, 3])", True),
        ((2, 3), "a 2x3 X", True),
        ((1, 3, 4), "X must be 2-D, got (1, 3, 4)", True),
        ((5,), "b has shape (5,)", True),
        ((2, 3), "X has shape [2, 30]", False),
        ((2, 3), "X has shape [12, 3]", False),
        ((5,), "b has shape [15]", False),
    ],
)
def test_a_shape_is_named_in_any_common_spelling_and_only_itself(shape, message, named):
    """The contract asks a message to name the operand's shape (course §2.1), not to format it one
    way: a student's (1, 3, 4) lost 16 of 44 S2.1-shapes tests when only [1, 3, 4] was read."""
    import re

    from stackcheck.impl.contract import shape_spelled

    assert bool(re.search(shape_spelled(shape), message)) is named
