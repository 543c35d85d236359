"""--impl: a student's module replaces the names it provides; the rest falls back to the reference."""
import pytest

pytestmark = pytest.mark.meta

HOMEWORK = '''
import numpy as np

def numpy_steps(x, w, b):   # homework with a bug: ReLU written as abs
    a = x @ w
    z = a + b
    return a, z, np.abs(z)
'''


def test_impl_from_a_file_replaces_only_what_it_provides(pytester, suite_file):
    homework = pytester.makepyfile(homework=HOMEWORK)
    result = pytester.runpytest_inprocess(suite_file("tests_math/test_s2_2_hand.py"), "-k", "numpy-cpu or torch-cpu",
                                          "-p", "no:cacheprovider", "--impl", str(homework))
    result.assert_outcomes(failed=1, passed=1)  # numpy uses the homework, torch falls back
    result.stdout.fnmatch_lines(["*implementations: stackcheck_impl_homework provides numpy_steps*",
                                 "*FAILED*numpy-cpu*"])


def test_unknown_impl_module_is_a_clear_error(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("--impl", "no_such_module_xyz", "-p", "no:cacheprovider")
    assert result.ret != pytest.ExitCode.OK
    assert "no_such_module_xyz" in result.stdout.str() + result.stderr.str()


def test_reference_surface_is_documented():
    from stackcheck import reference
    from stackcheck.impl import SURFACE

    assert {"check_operands", "numpy_forward", "numpy_steps", "torch_forward", "broadcast_bias"} <= set(SURFACE)
    for name in SURFACE:
        assert f"``{name}" in reference.__doc__, f"{name} is missing from the surface table in reference.py"
