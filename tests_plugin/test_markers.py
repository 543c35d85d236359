"""Device markers: a device-parametrized test gets its marker, so -m cuda selects exactly the CUDA work."""

import pytest

pytestmark = pytest.mark.meta


def _collected(pytester, *args):
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    return [line for line in result.outlines if "::" in line]


def test_minus_m_cuda_selects_exactly_the_cuda_variants(pytester, suite_file):
    path = suite_file("tests_math/test_s2_2_hand.py")
    selected = {device: _collected(pytester, path, "-m", device) for device in ("cpu", "cuda", "tpu")}
    for device, nodeids in selected.items():
        assert nodeids and all(nodeid.endswith(f"-{device}]") for nodeid in nodeids), (device, nodeids)
    assert sorted(sum(selected.values(), [])) == sorted(_collected(pytester, path))


def test_a_test_without_device_gets_the_cpu_marker(pytester):
    pytester.makepyfile("def test_plain():\n    pass\n")
    assert len(_collected(pytester, "-m", "cpu")) == 1
    assert _collected(pytester, "-m", "cuda") == []


def test_markers_are_registered_for_strict_markers(pytester):
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.cpu\n@pytest.mark.numpy\n@pytest.mark.meta\n@pytest.mark.precision\n"
        "def test_marked():\n    pass\n"
    )
    pytester.runpytest_inprocess("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    "expression, suggestion", [("gpu", "cuda"), ("cdua", "cuda"), ("not jaxx", "jax"), ("torch and nvidia", "cuda")]
)
def test_an_unknown_marker_in_minus_m_is_a_usage_error_with_a_suggestion(pytester, expression, suggestion):
    pytester.makepyfile("def test_plain():\n    pass\n")
    result = pytester.runpytest_inprocess("-m", expression, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: -m {expression!r}: no marker named *; did you mean -m {suggestion}?*"])


def test_known_markers_and_expressions_still_select(pytester):
    pytester.makepyfile("import pytest\n@pytest.mark.jax\ndef test_j():\n    pass\n")
    pytester.runpytest_inprocess("-m", "jax and not (cuda or tpu)", "-p", "no:cacheprovider").assert_outcomes(passed=1)
