"""A graded submission's Triton kernels reach the judge as source it checks and has launched again
in a process that never imported the submission (stackcheck.impl.kernel_source, issue 50 item 2):
every correct spelling survives the trip with the same values, the check refuses any name or
attribute outside Triton's language (each of Python's builtins, each path out of triton.language),
and a host that hands its kernel the answer, or launches none, earns nothing, graded or not."""

import builtins
import inspect
import itertools
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.claims.spellings import importable, triton_spellings
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.impl import kernel_source
from stackcheck.impl.kernel_source import KernelRefused
from stackcheck.impl.loader import load_module

pytestmark = pytest.mark.meta
torch = pytest.importorskip("torch")
pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parent.parent
COUNTER = itertools.count()
KERNEL = """def k(a_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(a_ptr + offsets, mask=offsets < n)
    tl.store(y_ptr + offsets, {value}, mask=offsets < n)
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    with importable(tmp_path_factory.mktemp("kernels")) as path:
        yield path


def judged(name: str, fn, *args, **kwargs):
    """(what ``fn`` returned, what the judge's replay of its recorded launches returns)."""
    with kernel_source.recording(args, kwargs) as recorder:
        value = fn(*args, **kwargs)
    plan = kernel_source.checked(name, recorder.program(value), kernel_source.host_values(name, args))
    return value, kernel_source.replay(plan, args, kwargs)


@settings(max_examples=20, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(spelling=triton_spellings(), n=st.sampled_from([1, 7, 33]), m=st.sampled_from([1, 5, 65]))
def test_every_triton_spelling_is_checked_and_replayed_to_the_same_values(spelling, n, m, folder):
    module = load_module(str(spelling.write(folder, f"kernel_{next(COUNTER)}")))
    a_np, _, b_np = make_inputs(n, m, m, seed=n * m)
    a, b = torch.from_numpy(a_np), torch.from_numpy(b_np)
    value, replayed = judged("triton_bias_relu", module.triton_bias_relu, a, b, block_size=16)
    assert_matches_reference(replayed.numpy(), value.numpy(), dtype="float32", k=1, spelling=str(spelling))


def test_the_course_forward_keeps_its_torch_matmul_as_the_judges_own():
    """§11.4: A = X @ W by torch on the host is what the judge computes itself, then the kernel runs."""
    from stackcheck.impl import reference

    x, w, b = (torch.from_numpy(v) for v in make_inputs(9, 16, 33, seed=4))
    value, replayed = judged("triton_forward", reference.triton_forward, x, w, b)
    assert_matches_reference(replayed.numpy(), torch.relu(x @ w + b).numpy(), dtype="float32", k=16)


def refused(value: str, scope: dict | None = None) -> None:
    entry = {"source": KERNEL.format(value=value), "names": {"tl": ["module", "triton.language"], **(scope or {})}}
    with pytest.raises(KernelRefused):
        kernel_source._checked_kernels({"k": entry})


def test_a_plain_kernel_passes_the_check():
    text = kernel_source._checked_kernels({"k": {"source": KERNEL.format(value="tl.maximum(x, 0.0)"), "names": {
        "tl": ["module", "triton.language"]}}})  # fmt: skip
    assert "@triton.jit\ndef k(" in text


@pytest.mark.parametrize("name", sorted(set(dir(builtins)) - kernel_source.BUILTINS - {"True", "False", "None"}))
def test_every_other_builtin_is_refused(name):
    """Each name of Python's builtins but the few Triton's language gives a meaning (range, min, ...);
    True, False and None are constants, not names."""
    refused(f"{name}(x)")


def _paths_out_of_triton_language():
    """Every ``tl.<module>.<attr>`` that is a module outside triton.language (builtins, math, numpy...)."""
    import triton.language as tl

    found = []
    for sub, module in sorted(inspect.getmembers(tl, inspect.ismodule)):
        for attr, value in sorted(inspect.getmembers(module, inspect.ismodule)):
            if not attr.startswith("_") and not value.__name__.startswith("triton.language"):
                found.append(f"tl.{sub}.{attr}")
    return found


@pytest.mark.parametrize("path", _paths_out_of_triton_language())
def test_every_path_out_of_triton_language_is_refused(path):
    refused(f"{path}.sqrt(x)")


@pytest.mark.parametrize(
    "value, scope",
    [
        ("x.handle", None),  # the interpreter's host array
        ("x.__class__", None),
        ("(lambda v: v)(x)", None),
        ("[v for v in x]", None),
        ("helper(x)", {"helper": ["other", "builtins.function"]}),
        ("os.getcwd()", {"os": ["module", "os"]}),
        ("x + SECRET", {"SECRET": ["other", "builtins.str"]}),
    ],
    ids=["handle", "dunder", "lambda", "comprehension", "python-function", "os-module", "string-global"],
)
def test_what_is_not_triton_is_refused(value, scope):
    refused(value, scope)


CHEATS = {
    "the answer computed by torch, then copied by a kernel": (
        "    y = torch.relu(a + b)\n    out = torch.empty_like(a)\n"
        "    copy[(triton.cdiv(a.numel(), 64),)](y, out, a.numel(), BLOCK=64)\n    return out\n"
    ),
    "no kernel at all": "    return torch.relu(a + b)\n",
}
COPY = """
@triton.jit
def copy(a_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(a_ptr + offsets, mask=offsets < n), mask=offsets < n)
"""


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_host_that_hands_over_the_answer_earns_nothing(cheat, folder):
    path = folder / f"cheat_{next(COUNTER)}.py"
    path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n" + COPY
        + "\n\ndef triton_bias_relu(a, b, block_size=256, out=None):\n" + CHEATS[cheat]
    )  # fmt: skip
    module = load_module(str(path))
    a, b = (torch.from_numpy(v) for v in make_inputs(8, 64, 64, seed=1)[::2])
    try:
        _, replayed = judged("triton_bias_relu", module.triton_bias_relu, a, b)
    except KernelRefused:
        return
    assert bool(replayed.isnan().all()), "a buffer the host filled with the answer reached the kernel"


def homework_with(tmp_path: Path, definitions: str) -> Path:
    from stackcheck.homework import assignment

    homework = tmp_path / "hw"
    homework.mkdir()
    stub = assignment.stub_source(["kernels"])
    (homework / "homework.py").write_text(stub + "\n\n# the student's work\n" + definitions)
    return homework


HONEST = COPY.replace("copy", "bias_relu").replace(
    "(a_ptr, y_ptr, n", "(a_ptr, b_ptr, y_ptr, n, M: tl.constexpr"
).replace(
    "tl.load(a_ptr + offsets, mask=offsets < n)",
    "tl.maximum(tl.load(a_ptr + offsets, mask=offsets < n) + tl.load(b_ptr + offsets % M, mask=offsets < n), 0.0)",
) + (
    "\n\ndef triton_bias_relu(a, b, block_size=256, out=None):\n"
    "    out = torch.empty_like(a) if out is None else out\n"
    "    if a.numel():\n"
    "        bias_relu[(triton.cdiv(a.numel(), block_size),)](a, b, out, a.numel(), M=a.shape[1], BLOCK=block_size)\n"
    "    return out\n"
)
FORGED = (
    COPY
    + "\n\ndef triton_bias_relu(a, b, block_size=256, out=None):\n"
    + CHEATS["the answer computed by torch, then copied by a kernel"].replace(
        "out = torch.empty_like(a)", "out = torch.empty_like(a) if out is None else out"
    )
)


@pytest.mark.parametrize("body, outcome", [(HONEST, "passed"), (FORGED, "failed")], ids=["kernel", "forged"])
@pytest.mark.parametrize("graded", [True, False], ids=["graded", "own-run"])
def test_a_submission_is_judged_on_what_its_checked_kernels_compute(tmp_path, body, outcome, graded, graded_command):
    """Graded, the judge launches the checked kernels in its launcher; in the student's own run the
    same check runs in-process. The honest kernel passes S11.2-mask's boundary test either way; a host
    that computes the answer in torch and copies it with a kernel fails it either way. Fresh processes, both
    runs: the graded one as `stackcheck grade` starts its judge, the student's as typed."""
    homework = homework_with(tmp_path, "import torch\nimport triton\nimport triton.language as tl\n" + body)
    report = tmp_path / "report.json"
    plain = [__import__("sys").executable, "-m", "pytest", f"--homework={homework}", "-p", "no:cacheprovider"]
    command = [*(graded_command(homework) if graded else plain), f"--curriculum-report={report}", "-m", "cpu"]
    command += ["tests_kernels/test_s11_2_mask.py::test_boundary_sizes"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    tests = [t for claim in json.loads(report.read_text())["claims"] for t in claim.get("tests", [])]
    outcomes = {t["outcome"] for t in tests if "test_boundary_sizes" in t["nodeid"]}
    # the empty sizes (0 x 5, 5 x 0) pass either way: no kernel computes anything there
    assert outcome in outcomes and outcomes <= {outcome, "passed"}, (outcomes, done.stdout[-3000:])


ACCUMULATING = """
@triton.jit
def add_into(a_ptr, b_ptr, y_ptr, n, M: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offsets, mask=offsets < n) + tl.load(b_ptr + offsets % M, mask=offsets < n)
    target = y_ptr + offsets
    tl.atomic_add(target, tl.maximum(a, 0.0), mask=offsets < n)


def triton_bias_relu(a, b, block_size=256, out=None):
    y = torch.zeros_like(a)
    add_into[(triton.cdiv(a.numel(), 64),)](a, b, y, a.numel(), M=a.shape[1], BLOCK=64)
    return y
"""
WRITE_ONLY = ACCUMULATING.replace("tl.atomic_add(target,", "tl.store(target,").replace(
    "offsets = tl.program_id(0) * BLOCK", "offsets = tl.program_id(0) * BLOCK * 2"
)  # stores half the elements: the rest was zeros only by the host's choice


@pytest.mark.parametrize("body, complete", [(ACCUMULATING, True), (WRITE_ONLY, False)], ids=["atomic", "store"])
def test_a_zeroed_buffer_keeps_its_zeros_only_where_a_kernel_reads_it(body, complete, folder):
    """A buffer the host filled with one value starts so where the kernel reads it (an atomic add into
    zeros is right); a buffer it only writes starts as NaN, so elements no program stored show."""
    path = folder / f"fill_{next(COUNTER)}.py"
    path.write_text("import torch\nimport triton\nimport triton.language as tl\n" + body)
    a, b = (torch.from_numpy(v) for v in make_inputs(8, 64, 64, seed=2)[::2])
    _, replayed = judged("triton_bias_relu", load_module(str(path)).triton_bias_relu, a, b)
    assert bool(replayed.isnan().any()) != complete, replayed
    if complete:
        assert_matches_reference(replayed.numpy(), torch.relu(a + b).numpy(), dtype="float32", k=1)
