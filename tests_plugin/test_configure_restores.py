"""The plugin gives back what it set (issue 37, item 5): after a pytest run in a process that goes on
(pytester's in-process runs, the mutant server's batches), the environment variables its configure
changed and the Hypothesis profile it loaded are as they were before the run."""

import os

import pytest

pytestmark = pytest.mark.meta


def test_environment_and_hypothesis_profile_are_given_back(pytester, monkeypatch):
    from hypothesis import settings

    if not hasattr(settings, "get_current_profile_name"):
        pytest.skip("this Hypothesis cannot name its current profile (pip install -U hypothesis)")
    outer = settings.get_current_profile_name()
    monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/nowhere")
    pytester.makepyfile(
        "import os\nfrom hypothesis import settings\n\ndef test_inside():\n"
        "    assert os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'] == 'false'\n"
        "    assert settings.get_current_profile_name() in ('ci', 'dev')\n"
    )
    settings.load_profile("default")
    try:
        result = pytester.runpytest_inprocess("-p", "stackcheck", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
        assert settings.get_current_profile_name() == "default"
    finally:
        settings.load_profile(outer)
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/nowhere"
