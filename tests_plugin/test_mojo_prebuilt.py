"""Issue 53: Mojo programs built elsewhere (``--mojo-prebuilt DIR``) are checked against the local GPU
before one runs: a folder built for another GPU, or by a builder that did not say for which, is one
clear failure with the command that builds them for this GPU, and that command does."""

import subprocess
import sys

import pytest

from stackcheck.toolchains import mojo_build

pytestmark = pytest.mark.meta

USES_A_PROGRAM = """
def test_runs_a_prebuilt_program(mojo_program):
    program, _ = mojo_program("bias_relu_blocks", lambda: None)
    assert program.name == "bias_relu_blocks"
"""


def run(pytester, monkeypatch, folder, profile="t4"):
    monkeypatch.setenv("STACKCHECK_GPU_PROFILE", profile)  # a T4 (sm_75), as a Colab learner has
    pytester.makepyfile(USES_A_PROGRAM)
    return pytester.runpytest_inprocess(f"--mojo-prebuilt={folder}", "-p", "no:cacheprovider")


@pytest.mark.parametrize("written", ["nvidia:90\n", None], ids=["for-sm90", "unsaid"])
def test_programs_built_for_another_gpu_fail_in_one_line_naming_the_build(pytester, monkeypatch, tmp_path, written):
    folder = tmp_path / "prebuilt"
    folder.mkdir()
    (folder / "bias_relu_blocks").write_text("")
    if written:
        (folder / mojo_build.TARGET_FILE).write_text(written)
    result = run(pytester, monkeypatch, folder)
    result.assert_outcomes(failed=1)
    said = "built for nvidia:90" if written else "without a TARGET file"
    result.stdout.fnmatch_lines([f"*{said}*this GPU is nvidia:75*python -m stackcheck.mojo_build {folder} nvidia:75*"])
    (folder / mojo_build.TARGET_FILE).write_text("nvidia:75\n")
    run(pytester, monkeypatch, folder).assert_outcomes(passed=1)


@pytest.mark.max_compiles
def test_the_printed_build_command_builds_for_that_gpu(tmp_path):
    """The command the failure prints, run as printed in a fresh interpreter, as the learner would type it
    (Mojo cross-compiles for a GPU it does not have)."""
    pytest.importorskip("mojo")
    folder = tmp_path / "prebuilt"
    line = mojo_build.prebuilt_misfit(folder, (7, 5))
    command = line.split("machine with Mojo: ", 1)[1].split()
    done = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (folder / mojo_build.TARGET_FILE).read_text().strip() == "nvidia:75"
    assert mojo_build.prebuilt_misfit(folder, (7, 5)) is None and (folder / mojo_build.BLOCKS_PROGRAM).is_file()
