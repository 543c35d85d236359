"""A homework run as a student starts it (stackcheck.plugin.homework): from inside the homework
folder, with the path spelt either way; no score for a run that reached none of the student's
code; rerun lines that grade the same homework; a non-zero exit whenever anything is wrong."""

import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
ABS_RELU = '''"""ReLU written as abs."""
import numpy as np

ASSIGNED = ("math",)


def check_operands(x, w, b):
    return None


def numpy_steps(x, w, b):
    a = x @ w
    z = a + b
    return a, z, np.abs(z)
'''


@pytest.fixture
def run(pytester, monkeypatch):
    """pytest in this process (as a student would start it from ``cwd``): (exit code, stdout, stderr)."""

    def start(cwd: Path, *args: str):
        monkeypatch.chdir(cwd)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
        return int(result.ret), result.stdout.str(), result.stderr.str()

    return start


@pytest.fixture
def homework() -> Path:
    """A homework folder inside the checkout, where `stackcheck homework init hw` puts it."""
    folder = Path(tempfile.mkdtemp(prefix=".hw-", dir=ROOT))
    (folder / "homework.py").write_text(ABS_RELU)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(ABS_RELU)
    return folder


def test_from_inside_the_folder_the_assigned_parts_run_and_reruns_keep_the_homework(run, homework):
    code, out, _ = run(homework, "--homework=.", "-k", "test_hand_example_a_z_y_exact and numpy")
    assert "score: " in out and "S2.2-hand" in out, out[-3000:]
    assert re.search(r"rerun: python -m pytest (-p no:cacheprovider )?--homework=\. '", out), out[-3000:]
    assert "revisit first: §2.2 [S2.2-hand]: A and Z were right and Y = ReLU(Z) is not" in out, out[-3000:]
    assert code != 0, "a failing function and unanswered checkpoints: the run fails"
    assert "Traceback" not in out and "short test summary" not in out, "the score leads, not tracebacks"


def test_a_run_that_reaches_no_student_code_has_no_score(run, homework):
    code, out, _ = run(homework, "--homework=.", "-k", "no_test_has_this_name")
    assert "no score: none of the 0 tests that ran reached a function of homework.py" in out, out
    assert "score: " not in out.replace("no score: ", "")
    assert code != 0


def test_from_inside_a_folder_outside_the_checkout_the_way_that_works_is_named(run, outside):
    code, out, err = run(outside, "--homework=.")
    assert code == pytest.ExitCode.USAGE_ERROR, out[-2000:]
    assert f"cd {shlex.quote(str(ROOT))} && python -m pytest --homework={shlex.quote(str(outside))}" in err, err


@pytest.mark.parametrize("flag", ["--homework", "--course", "--impl"])
def test_a_path_outside_given_after_a_space_is_refused_in_one_line(run, outside, flag):
    elsewhere = outside.parent / "elsewhere"
    elsewhere.mkdir()
    code, out, err = run(elsewhere, flag, "../hw")
    said = err.strip().splitlines()
    assert code == pytest.ExitCode.USAGE_ERROR, out[-2000:] + err[-2000:]
    assert any(f"{flag} ../hw: a path outside" in line and f"write {flag}=../hw" in line for line in said), said


HANGS = """import numpy as np

ASSIGNED = ("math",)


def check_operands(x, w, b):
    while True:
        pass


def numpy_steps(x, w, b):
    check_operands(x, w, b)
    a = x @ w
    z = a + b
    return a, z, np.maximum(z, 0)


def numpy_forward(x, w, b):
    return numpy_steps(x, w, b)[2]
"""


def test_one_endless_loop_costs_one_timeout_not_the_submission(run, homework, tmp_path):
    (homework / "homework.py").write_text(HANGS)
    report = tmp_path / "r.json"
    files = ("tests_math/test_s2_2_hand.py", "tests_math/test_bad_input.py")
    run(ROOT, f"--homework={homework}", *files, "-k", "numpy", "--timeout=2", f"--curriculum-report={report}")
    tests = {t["nodeid"]: t for c in json.loads(report.read_text())["claims"] for t in c["tests"]}
    messages = [t.get("message") or "" for t in tests.values() if t["outcome"] == "failed"]
    stopped = [m for m in messages if m.startswith("timed out after 2 s: check_operands")]
    spared = [m for m in messages if "did not return within 2 s in an earlier test" in m]
    assert len(stopped) == 1 and len(spared) >= 2, messages


def test_the_time_limit_covers_the_call_not_the_report(pytester):
    """A slow report (pytest rendering a long traceback on a loaded machine) must not be cut by the
    homework's per-test limit: the limit fired there once, an INTERNALERROR that lost the run."""
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(ABS_RELU)
    pytester.makeconftest(
        "import time\nimport pytest\n\n@pytest.hookimpl(wrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    time.sleep(1.5 if call.when == 'call' else 0)\n"
        "    return (yield)\n"
    )
    pytester.makepyfile(test_quick="import time\n\ndef test_quick():\n    time.sleep(0.2)\n")
    result = pytester.runpytest_inprocess(
        f"--homework={folder}", "test_quick.py", "--timeout=1", "-p", "no:cacheprovider"
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1)


def test_an_unwritten_timed_call_is_a_checkpoint_answer_not_a_crash(pytester):
    """A student's file that leaves timed_call unwritten (--strict-impl stubs every missing name):
    checkpoint 2 measures timed_call when the run ends, and its NotAttempted ended the run in an
    INTERNALERROR; it is that checkpoint's "NO" with the reason."""
    student = pytester.path / "student.py"
    student.write_text("def numpy_steps(x, w, b):\n    raise NotImplementedError('§2.2: write numpy_steps')\n")
    pytester.makepyfile(
        test_steps="import numpy as np\nimport pytest\n\n@pytest.mark.claim('S2.2-hand')\n"
        "def test_steps(impl):\n    impl.numpy_steps(np.ones((2, 3)), np.ones((3, 2)), np.ones(2))\n"
    )
    result = pytester.runpytest_inprocess(
        f"--impl={student}", "--strict-impl", "test_steps.py", "-p", "no:cacheprovider"
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stderr.str()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*your timed_call raised NotAttempted: §6.5: timed_call is not written yet*"])


def test_a_file_graded_by_name_is_rerun_by_name(pytester):
    """``--impl FILE --strict-impl`` grades a file wherever it lies: a failing claim's rerun line names
    that file the same way, not a --homework folder that need not hold a homework.py."""
    student = pytester.path / "mine" / "solution.py"
    student.parent.mkdir()
    student.write_text("import numpy as np\n\ndef numpy_forward(x, w, b):\n    return np.zeros((2, 2))\n")
    pytester.makepyfile(
        test_forward="import numpy as np\nimport pytest\n\n@pytest.mark.claim('S2.2-hand')\n"
        "def test_forward(impl):\n"
        "    assert impl.numpy_forward(np.ones((2, 3)), np.ones((3, 2)), np.ones(2)).sum() == 14\n"
    )
    result = pytester.runpytest_inprocess(
        f"--impl={student}", "--strict-impl", "test_forward.py", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"Rerun: python -m pytest --impl={student} --strict-impl -p no:cacheprovider 'test_forward.py::test_forward'"]
    )
    assert "--homework=" not in result.stdout.str()


def test_a_stub_caught_inside_pytest_raises_is_not_attempted(pytester):
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(
        "ASSIGNED = ('math',)\n\ndef check_operands(x, w, b):\n"
        "    raise NotImplementedError('§2.1: write check_operands')\n"
    )
    pytester.makepyfile(
        test_caught="import numpy as np\nimport pytest\n\n@pytest.mark.claim('S2.1-shapes')\n"
        "def test_rank(impl):\n    with pytest.raises(Exception, match='must be 2-D'):\n"
        "        impl.check_operands(np.ones(3), np.ones((3, 2)), np.ones(2))\n"
        "\n@pytest.mark.claim('S2.1-shapes')\ndef test_missing(impl):\n    with pytest.raises(Exception, match='K'):\n"
        "        impl.numpy_steps(np.ones((2, 4)), np.ones((3, 2)), np.ones(2))\n"
    )
    result = pytester.runpytest_inprocess(f"--homework={folder}", "test_caught.py", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*not attempted: check_operands (course §2.1) still raises NotImplementedError*"])
    result.stdout.fnmatch_lines(["*not attempted: numpy_steps (course §2.2) is not in homework.py*"])  # never written
    assert "Regex pattern did not match" not in result.stdout.str()


def test_a_stub_met_in_a_child_process_is_not_attempted(pytester, suite_file):
    """The sm_90 compile builds the student's graph in a process of its own (stackcheck.run.max_graphs),
    in homework mode there too: a stub it meets reads "not attempted", never a failed compile, and a
    missing assigned name does not fall back to the reference in the child."""
    pytest.importorskip("max.graph")
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(
        "ASSIGNED = ('kernels',)\n\ndef mojo_package():\n    raise NotImplementedError('§10.4: write mojo_package')\n"
    )
    test = suite_file("tests_kernels/test_s10_4_gpu_target.py")
    # a process of its own: in this one, the compile thread may still be busy with this worker's own
    # cold sm_90 compile, which the homework's would wait behind (171 s in a clean CI run)
    result = pytester.runpytest_subprocess(f"--homework={folder}", test, "-p", "no:cacheprovider")
    if result.parseoutcomes().get("skipped"):
        pytest.skip("the Mojo stack is missing here: " + result.stdout.str()[-300:])
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*not attempted yet: mojo_package*"])
    assert "compiling graph structure-gpu" not in result.stdout.str()


def test_a_test_that_waits_for_a_compile_gets_the_compiles_time_not_the_homework_limit(pytester, suite_file):
    """A clean CI run failed the test above with "timed out after 60 s": a test that waits for a cold MAX
    graph compile (marked max_graph) is given the compile's limit; the student's own tests keep 60 s."""
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(
        "ASSIGNED = ('kernels',)\n\ndef mojo_package():\n    raise NotImplementedError\n"
    )
    tests = [suite_file("tests_kernels/test_s10_4_gpu_target.py"), suite_file("tests_kernels/test_s11_2_mask.py")]
    reprec = pytester.inline_run(f"--homework={folder}", *tests, "--collect-only", "-p", "no:cacheprovider")
    items = reprec.getcalls("pytest_collection_finish")[0].session.items
    limits = {item.nodeid.split("::")[0].rsplit("/", 1)[-1]: item.get_closest_marker("timeout") for item in items}
    assert limits["test_s10_4_gpu_target.py"].kwargs == {"timeout": 900.0, "func_only": True}, limits
    keeps = limits["test_s11_2_mask.py"].kwargs
    assert keeps == {"timeout": None, "func_only": True}, "a test of the student's kernel keeps the homework's limit"


def test_a_torch_compile_test_gets_inductors_cold_compile_time(pytester, suite_file):
    """On the H200's 16-core host, loaded, a correct torch_compiled_forward ran past 60 s in its cold
    compile and the solution scored 80 %: a torch.compile test gets 300 s, an eager one keeps 60 s.
    In a fresh process of its own: an in-process run after the MAX one above aborts in MAX's bindings."""
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(
        "ASSIGNED = ('math',)\n\ndef torch_compiled_forward(x, w, b):\n    raise NotImplementedError\n"
    )
    pytester.makepyfile(
        limits_probe="def pytest_collection_finish(session):\n"
        "    for item in session.items:\n"
        "        mark = item.get_closest_marker('timeout')\n"
        "        print('LIMIT', item.nodeid.rsplit('::', 1)[-1], mark.kwargs['timeout'])\n"
    )
    tests = [suite_file("tests_math/test_s8_1_backend.py"), suite_file("tests_math/test_s2_2_hand.py")]
    result = pytester.runpytest_subprocess(
        f"--homework={folder}",
        *tests,
        "-m",
        "not max",
        "-p",
        "limits_probe",
        "--collect-only",
        "-p",
        "no:cacheprovider",
    )
    limits = dict(line.split(" ", 2)[1:] for line in result.outlines if line.startswith("LIMIT "))
    compiled = {v for n, v in limits.items() if "torch_compile-cpu" in n}
    eager = {v for n, v in limits.items() if "[numpy-cpu]" in n}
    assert compiled == {"300.0"} and eager == {"None"}, limits


SEGFAULTS = '''

def sum_blocked(values, block=8):
    """Native code gone wrong: reads address 0, and the process dies by SIGSEGV."""
    import ctypes

    return ctypes.string_at(0)
'''


CRASH_TESTS = """import numpy as np
import pytest


@pytest.mark.claim("MC13")
def test_blocked(impl):
    impl.sum_blocked(np.ones(16, np.float32), 8)


@pytest.mark.claim("MC13")
def test_sequential(impl):
    assert impl.sum_sequential(np.ones(4, np.float32)) == 4
"""


def test_a_call_that_kills_the_worker_costs_that_test_only(homework, graded_command):
    """A graded run (issue 50): the student's code runs in a worker; a call that kills it (native code
    reading address 0) fails that test, naming the signal and the function, and the next test gets a
    new worker. (Two small tests of the instructor's kind, beside the homework; sandboxed where
    Bubblewrap works, the same without it: the GPU image has none.) A fresh judge process, as `stackcheck
    grade` starts it."""
    from stackcheck.impl import reference

    (homework / "homework.py").write_text(Path(reference.__file__).read_text() + "\nASSIGNED = ('math',)\n" + SEGFAULTS)
    (homework / "test_crash.py").write_text(CRASH_TESTS)
    report = homework / "report"
    command = [*graded_command(homework), f"--curriculum-report={report}.json"]
    command += [f"--rootdir={ROOT}", str(homework / "test_crash.py")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=homework)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    kept = json.loads((homework / "report.instructor-only.json").read_text())  # tests beside it: the instructor's
    tests = {t["nodeid"]: t for t in kept}
    outcomes = {nodeid.split("::")[-1]: t["outcome"] for nodeid, t in tests.items()}
    assert outcomes == {"test_blocked": "failed", "test_sequential": "passed"}, outcomes
    said = next(t["message"] for n, t in tests.items() if n.endswith("test_blocked"))
    assert "sum_blocked (course §MC13) crashed" in said and "SIGSEGV" in said, said


SLIP = '''"""A slip of Python in the homework."""
import numpy as np

ASSIGNED = ("math",)


def numpy_steps(x, w, b):
    a = x @ weights  # noqa: F821
    return a, a + b, np.maximum(a + b, 0)
'''


@pytest.mark.parametrize("graded", [False, True], ids=["pytest", "graded"])
def test_an_error_in_the_students_code_names_its_file_and_line_first(homework, graded, graded_command):
    """Issue 52 item 4: a NameError in the homework is no course concept: its failure says where in the
    student's file it was raised (the submission's own name when graded, the worker's frame), with no
    course section before it, and the claim's feedback names that line, not another test's pointer. Fresh
    processes, both runs: the graded one as `stackcheck grade` starts its judge, the student's as typed."""
    (homework / "homework.py").write_text(SLIP)
    plain = [sys.executable, "-m", "pytest", f"--homework={homework}", "-p", "no:cacheprovider"]
    command = graded_command(homework) if graded else plain
    command += [f"--rootdir={ROOT}", "tests_math/test_s2_2_hand.py", "-k", "numpy"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    out = done.stdout.splitlines()
    section = out[out.index(next(line for line in out if "what to revisit" in line)) + 1]
    shown = "homework.py" if graded else str((homework / "homework.py").relative_to(ROOT))
    assert section == f"Fix first, your code raised NameError at {shown}:8 (numpy_steps): name 'weights' is not defined"
    assert not [line for line in out if line.startswith("Revisit first")], done.stdout[-3000:]
    feedback = next(line for line in out if "first failure:" in line)
    assert feedback.endswith(f"your code raised NameError at {shown}:8 (numpy_steps): name 'weights' is not defined")
    assert not [line for line in out if "revisit first:" in line], done.stdout[-3000:]


COMPILED_ONLY_SLIP = """

def torch_steps(x, w, b):
    import torch

    a = x @ w
    z = a + b
    y = torch.relu(z)
    if torch.compiler.is_compiling():  # wrong only in the program torch.compile makes
        y = y + 1
    return a, z, y
"""


@pytest.mark.parametrize("graded", [False, True], ids=["pytest", "graded"])
def test_the_compiled_steps_compile_the_students_own_function(homework, graded, graded_command):
    """§8.2's compiled path runs the student's torch_steps through torch.compile, graded too: there
    the worker compiles it (stackcheck.grading.judge.compiled), since compiling the judge's proxy would
    only run it eagerly. A slip that exists only in the compiled program fails the torch_compile test,
    and the eager test of the same function passes. Fresh processes, both runs: the graded one as `stackcheck
    grade` starts its judge, the student's as typed."""
    from stackcheck.claims.results import Report
    from stackcheck.impl import reference

    (homework / "homework.py").write_text(
        Path(reference.__file__).read_text() + "\nASSIGNED = ('math',)\n" + COMPILED_ONLY_SLIP
    )
    report = homework / "report.json"
    plain = [sys.executable, "-m", "pytest", f"--homework={homework}", "-p", "no:cacheprovider"]
    command = graded_command(homework) if graded else plain
    command += [f"--curriculum-report={report}", f"--rootdir={ROOT}", "tests_math/test_s2_2_hand.py"]
    command += ["-k", "a_z_y_exact and cpu and torch"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    outcomes = {t.nodeid.split("::")[-1]: t.outcome.value for _, t in Report.load(report).tests()}
    assert outcomes == {
        "test_hand_example_a_z_y_exact[torch-cpu]": "passed",
        "test_hand_example_a_z_y_exact[torch_compile-cpu]": "failed",
    }, done.stdout[-3000:]


def test_a_failure_told_in_one_line_is_not_rendered_as_a_traceback_first(run, homework, monkeypatch):
    """A not-attempted function's failure is reported in one line: pytest is not asked for the
    traceback that line replaces (rendering one parses every frame's whole source file again)."""
    (homework / "homework.py").write_text(
        'ASSIGNED = ("math",)\n\n\ndef numpy_steps(x, w, b):\n    raise NotImplementedError\n'
    )
    rendered = []
    original = pytest.ExceptionInfo.getrepr
    monkeypatch.setattr(
        pytest.ExceptionInfo, "getrepr", lambda self, *a, **k: rendered.append(1) or original(self, *a, **k)
    )
    code, out, _ = run(homework, "--homework=.", "-k", "test_hand_example_a_z_y_exact and numpy")
    assert code != 0 and "not attempted yet: numpy_steps" in out, out[-3000:]
    assert not rendered, f"{len(rendered)} traceback(s) rendered for failures reported in one line:\n{out[-3000:]}"
