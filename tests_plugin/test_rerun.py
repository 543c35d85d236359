"""Every "Rerun:" line a failing run prints (issue 52; stackcheck.run.invocation): executed as
printed, from where pytest was started, it runs that test alone and judges it as the run did. The
invocations are drawn (Hypothesis): the implementation under test, its strictness, marker and
keyword selections, plugins, ini overrides, output, report and parallel options, in any order."""

import shlex
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.meta

TEST = """
import numpy as np
import pytest

@pytest.mark.claim("S2.2-hand")
@pytest.mark.parametrize("stack, device", [("numpy", "cpu")])
def test_forward(impl, stack, device):
    x = np.array([[1.0, 2.0]]); w = np.array([[1.0], [-1.0]]); b = np.array([0.5])
    assert impl.numpy_forward(x, w, b).tolist() == [[0.0]], "ReLU(1 - 2 + 0.5) is 0"

def test_other():
    pass
"""
BUGGY = "import numpy as np\n\ndef numpy_forward(x, w, b):\n    return x @ w + b  # no ReLU\n"

# what a run may add around --impl: each repeated or left out by the rerun, none changing the verdict
EXTRAS = {
    "strict": ["--strict-impl"],
    "marker": ["-m", "not cuda"],
    "marker joined": ["-mcpu"],
    "keyword": ["-k", "forward or other"],
    "plugin off": ["-p", "no:randomly"],
    "ini override": ["-o", "console_output_style=classic"],
    "quiet": ["-q"],
    "verbose": ["-v"],
    "traceback": ["--tb=short"],
    "first failure": ["-x"],
    "report": ["--curriculum-report=out/report.json"],
    "claims": ["--claims", "all"],
    "warnings": ["-W", "ignore::DeprecationWarning"],
    "parallel": ["-n", "2"],  # the line is then written in an xdist worker
}


def _rerun_lines(output: str) -> list[str]:
    return [line.removeprefix("Rerun: ") for line in output.splitlines() if line.startswith("Rerun: ")]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    extras=st.lists(st.sampled_from(sorted(EXTRAS)), unique=True, max_size=4),
    impl_first=st.booleans(),
    spelled=st.sampled_from(["--impl={}", "--impl {}"]),
)
def test_a_printed_rerun_line_runs_that_test_as_the_run_judged_it(pytester, extras, impl_first, spelled):
    """The printed rerun line run as printed, in a fresh interpreter, as a student pastes it."""
    pytester.makepyfile(test_claimed=TEST)
    (pytester.path / "buggy.py").write_text(BUGGY)
    impl = spelled.format("buggy.py").split(" ")
    options = [word for name in extras for word in EXTRAS[name]]
    args = [*impl, *options] if impl_first else [*options, *impl]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "test_claimed.py", *args, "-p", "no:cacheprovider"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    lines = _rerun_lines(run.stdout)
    # 2: -x under xdist ends the run as interrupted after the failure
    assert run.returncode in (1, 2) and len(lines) == 1, run.stdout[-3000:] + run.stderr[-2000:]
    words = shlex.split(lines[0])
    assert words[:3] == ["python", "-m", "pytest"], lines[0]
    again = subprocess.run([sys.executable, *words[1:]], cwd=pytester.path, capture_output=True, text=True)
    said = again.stdout
    assert again.returncode == 1, f"{lines[0]}\n{said[-3000:]}{again.stderr[-2000:]}"
    assert "1 failed" in said and "passed" not in said.split("=")[-2], f"{lines[0]}\n{said[-3000:]}"
    assert _rerun_lines(said) == lines, f"the rerun's own rerun line differs: {_rerun_lines(said)} vs {lines}"


def test_a_rerun_repeats_every_option_but_selection_and_output(pytester):
    """The class, by construction: every option of this pytest (the suite's, pytest's, its plugins')
    is either repeated or left out by name, and the left-out names exist (a renamed one is caught)."""
    from stackcheck.run import invocation

    pytester.makepyfile(test_x="def test_x():\n    pass\n", x=BUGGY)
    seen = {}

    class Spy:
        @pytest.hookimpl(trylast=True)
        def pytest_configure(self, config):
            seen["dests"] = {a.dest for a in config._parser.optparser._actions}
            seen["xdist"] = config.pluginmanager.hasplugin("xdist")
            seen["repeated"] = invocation.repeated_options(config)

    pytester.runpytest_inprocess(
        "test_x.py",
        "-q",
        "-n",
        "0",
        "--impl=x.py",
        "-k",
        "x",
        "--require",
        "numpy",
        "-mcpu",
        "--course",
        "--co",
        plugins=[Spy()],
    )
    xdist = set() if seen["xdist"] else {"tx", "maxprocesses", "dist", "numprocesses"}
    unknown = invocation.LEFT_OUT - seen["dests"] - xdist
    assert not unknown, f"LEFT_OUT names options this pytest does not have: {sorted(unknown)}"
    # a bare --course (an optional value) is repeated with its value: the test id after it is none
    assert seen["repeated"] == ["--impl=x.py", "--require", "numpy", "-mcpu", "--course=shipped"], seen["repeated"]
