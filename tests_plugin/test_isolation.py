"""A student's kernel cannot take the run down (stackcheck.impl.isolation, issue 23): a Triton kernel
function given CPU tensors runs in a forked child. What it returns, raises, writes and launches
reaches the test as if it had run here; a crash or a hang fails the call, naming the function."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackcheck.claims import mutation
from stackcheck.impl import isolation

pytestmark = pytest.mark.meta
torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent


def run_in_child(fn, *args, **kwargs):
    assert isolation.applies("triton_bias_relu", args, kwargs)
    return isolation.call("triton_bias_relu", "11.2", fn, args, kwargs)


def test_a_crash_fails_the_call_naming_the_function_and_the_signal():
    with pytest.raises(isolation.Crashed, match=r"triton_bias_relu \(course §11\.2\) crashed.*SIGABRT"):
        run_in_child(lambda a: os.abort(), torch.zeros(3))


def test_an_exit_without_an_answer_is_a_crash_too():
    with pytest.raises(isolation.Crashed, match="exited with code 3 without returning"):
        run_in_child(lambda a: os._exit(3), torch.zeros(3))


def test_a_hang_is_cut_at_the_limit(monkeypatch):
    monkeypatch.setattr(isolation, "LIMIT_S", 1.0)
    started = time.monotonic()
    with pytest.raises(isolation.Crashed, match="did not answer within 1 s"):
        run_in_child(lambda a: time.sleep(60), torch.zeros(3))
    assert time.monotonic() - started < 30, "the child was waited for past its limit"


def test_an_exception_keeps_its_type_message_and_the_childs_traceback():
    def bad(a, b):
        raise ValueError(f"b has shape {list(b.shape)}")

    with pytest.raises(ValueError, match=r"b has shape \[2\]") as caught:
        run_in_child(bad, torch.zeros(3, 4), torch.zeros(2))
    assert "in bad" in "\n".join(caught.value.__notes__), "the child's traceback is attached as a note"


def test_writes_reach_the_callers_memory_around_the_view_too():
    """out= is written in place and returned as the caller's object; a store past the view lands in
    the caller's buffer (the canaries of §11.2's mask test must see it)."""
    whole = torch.full((10,), -7.0)
    out = whole[2:6]

    def writes(a, out=None):
        out.copy_(a)
        whole[8] = 99.0  # past the view, inside its storage
        return out

    returned = run_in_child(writes, torch.arange(4.0), out=out)
    assert returned is out
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert whole[8].item() == 99.0 and whole[0].item() == -7.0


def test_the_childs_launches_reach_the_launches_record():
    from stackcheck.toolchains import triton_kernels

    a, b = torch.zeros(3, 5), torch.zeros(5)
    with triton_kernels.recorded_launches() as grids:
        run_in_child(lambda a, b: triton_kernels.bias_relu(a, b, block_size=4), a, b)
    assert grids == [(4,)]


def test_nested_recordings_each_see_a_launch_once_and_unpatch_at_the_end():
    from triton.runtime.interpreter import InterpretedFunction

    from stackcheck.toolchains import triton_kernels

    a, b = torch.zeros(3, 5), torch.zeros(5)
    before = InterpretedFunction.run
    with triton_kernels.recorded_launches() as outer:
        with triton_kernels.recorded_launches() as inner:
            triton_kernels.bias_relu(a, b, block_size=4)
        triton_kernels.bias_relu(a, b, block_size=8)
    assert inner == [(4,)] and outer == [(4,), (2,)], (inner, outer)
    assert InterpretedFunction.run is before, "the launch method is restored once no recording is open"


def test_cuda_tensors_and_other_functions_stay_in_process():
    assert not isolation.applies("numpy_forward", (torch.zeros(2),), {})
    assert not isolation.applies("triton_bias_relu", (torch.zeros(2, device="meta"),), {})


@pytest.mark.parametrize(
    "module, code, verdict",
    [("tests_plugin/own_kernel.py", 0, "passed"), ("tests_meta/mutants/unmasked_kernel.py", 1, "failed")],
    ids=["own-masked-kernel", "own-unmasked-kernel"],
)
def test_tests_math_runs_to_its_end_with_a_module_that_defines_its_own_kernel(module, code, verdict):
    """The reproduction of issue 23: the unmasked kernel corrupted the heap, and the run ended in
    'Fatal Python error: Aborted' (exit 134) in a later test. Now its tests fail and the run ends. In a fresh
    process: the old failure ended its run with a fatal error, which must not be this run."""
    from stackcheck.toolchains.triton_kernels import interpreter_problem

    if interpreter_problem():
        pytest.skip(interpreter_problem())
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests_math", "-q", "-p", "no:cacheprovider", "-k", "triton"]
        + ["--impl", module, "-o", "addopts=", "-p", "no:xdist"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in mutation.PRIVATE},
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = (done.stdout + done.stderr)[-3000:]
    assert "Fatal Python error" not in tail, tail
    assert done.returncode == code, tail
    assert verdict in done.stdout.splitlines()[-1], tail
