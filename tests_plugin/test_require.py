"""Missing devices and stacks skip with a reason; --require turns that skip into a failure."""

import pytest

from stackcheck.stacks import available

pytestmark = pytest.mark.meta

TPU_TEST = "import pytest\n@pytest.mark.tpu\ndef test_on_tpu():\n    pass\n"


@pytest.mark.skipif(available.device_missing("cuda") is None, reason="this machine has CUDA: nothing to skip")
def test_require_cuda_turns_the_cuda_skip_into_a_failure(pytester, suite_file):
    path = suite_file("tests_math/test_s2_2_hand.py")
    skipped = pytester.runpytest_inprocess(path, "-m", "cuda", "-k", "torch-cuda", "-rs", "-p", "no:cacheprovider")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*SKIPPED*no CUDA*"])
    failed = pytester.runpytest_inprocess(
        path, "-m", "cuda", "-k", "torch-cuda", "--require", "cuda", "-p", "no:cacheprovider"
    )
    failed.assert_outcomes(errors=1)  # it fails in setup, before the test body
    failed.stdout.fnmatch_lines(["*--require cuda: no CUDA*", "*--require cuda: no test ran and passed on cuda*"])
    assert failed.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.skipif(available.device_missing("tpu") is None, reason="this machine has a TPU")
def test_missing_tpu_skips_and_require_tpu_fails(pytester):
    pytester.makepyfile(TPU_TEST)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(skipped=1)
    result = pytester.runpytest_inprocess("--require", "tpu", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_missing_stack_skips_with_install_hint_and_require_fails(pytester, monkeypatch):
    monkeypatch.setattr(
        available,
        "stack_missing",
        lambda s: f"{s} is not installed ({available.install_hint(s)})" if s == "jax" else None,
    )
    pytester.makepyfile(
        "import pytest\nfrom stackcheck.stacks.available import need\n"
        "@pytest.mark.jax\ndef test_marked():\n    pass\n"
        "def test_needs_inline():\n    need('jax')\n"
    )
    result = pytester.runpytest_inprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    skips = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(skips) == 2 and all("jax is not installed (pip install 'stackcheck[jax]')" in s for s in skips), skips
    required = pytester.runpytest_inprocess("--require", "jax", "-p", "no:cacheprovider")
    required.assert_outcomes(errors=1, failed=1)  # the marker fails in setup, need() in the body
    required.stdout.fnmatch_lines(["*--require jax: jax is not installed*"])


def test_what_require_asks_for_and_lacks_fails_the_run_not_the_claim(pytester, monkeypatch):
    """Issue 52: a claim test that --require fails for a missing stack or device gets no course
    section to revisit (nothing of the course went wrong) and leaves its claim skipped, not failed;
    the run still fails, saying what was required."""
    monkeypatch.setattr(available, "stack_missing", lambda s: "jax is not installed" if s == "jax" else None)
    pytester.makepyfile(
        "import pytest\nfrom stackcheck.stacks.available import need\n"
        "@pytest.mark.claim('S2.2-hand')\n@pytest.mark.jax\ndef test_marked():\n    pass\n"
        "@pytest.mark.claim('S2.2-hand')\ndef test_needs_inline():\n    need('jax')\n"
    )
    result = pytester.runpytest_inprocess("--require", "jax", "-p", "no:cacheprovider", "--claims", "all")
    result.assert_outcomes(errors=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not [line for line in result.outlines if "Revisit first" in line or "what to revisit" in line]
    row = next(line for line in result.outlines if " S2.2-hand " in line)
    assert "skipped" in row and "failed" not in row, row


def test_require_rejects_unknown_names(pytester):
    result = pytester.runpytest_inprocess("--require", "gpu", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'gpu'*"])


@pytest.mark.skipif(available.device_missing("cuda") is None, reason="this machine has CUDA: nothing to skip")
def test_minus_m_cuda_without_a_gpu_says_nothing_was_checked_in_one_line(pytester, suite_file):
    """The skips fold into one line per reason, and the run ends saying that nothing was checked."""
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_1_shapes.py"), "-m", "cuda", "-rs", "-p", "no:cacheprovider"
    )
    outcomes = result.parseoutcomes()
    assert outcomes["skipped"] >= 10 and "passed" not in outcomes
    skips = [line for line in result.outlines if line.startswith("SKIPPED")]
    # one line per framework that looks for the GPU (torch, JAX, MAX), however many tests it skips
    assert len(skips) == len({line.split("] ", 1)[1] for line in skips}) <= 3, skips
    nothing = [line for line in result.outlines if line.startswith("stackcheck: nothing was checked")]
    assert len(nothing) == 1, result.outlines[-10:]
    assert "lack of cuda" in nothing[0] and "pytest -m cpu" in nothing[0] and "--require cuda" in nothing[0]
    assert result.outlines[-2] == nothing[0], "it is the last line before pytest's own summary"
    assert result.ret == pytest.ExitCode.OK
