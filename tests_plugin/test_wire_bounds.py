"""What a graded submission's worker sends is bounded before the judge allocates it, and never reaches
the judge's own arguments (issue 74, item 5): the wire's limits, the judge's write-back and its
memory limit; what it printed in one call is never quoted in another's failure (item 7). A worker is
a fresh interpreter by design: a graded submission never runs in the judge's process."""

import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.grading import grader, judge, wire, worker

pytestmark = pytest.mark.meta

SHAPES = st.lists(st.integers(0, 1 << 40), min_size=0, max_size=6)


def spans(value) -> int:
    if type(value).__module__.startswith("torch"):
        return value.numel() * value.element_size()
    return value.size * value.itemsize


@settings(max_examples=300, deadline=None)
@given(shape=SHAPES, strides=st.lists(st.integers(0, 1 << 20), min_size=0, max_size=6), offset=st.integers(0, 99))
def test_a_view_of_an_argument_spans_no_more_than_the_answer_may(shape, strides, offset):
    """Any shape, strides and offset the worker names for a view of the judge's argument (a broadcast
    b of 2^32 rows costs the wire a few bytes): refused, or a view the answer's limit covers."""
    base = np.arange(100, dtype=np.float32)
    node = ["view", [0, 0], shape, strides[: len(shape)] + [0] * (len(shape) - len(strides)), offset]
    limit = wire.answer_limit([[base], {}])
    try:
        value = wire.Decoder([], [[base], {}], limit=limit)(node)
    except wire.WireError:
        return
    assert spans(value) <= limit and (value.size == 0 or np.shares_memory(value, base))


@settings(max_examples=200, deadline=None)
@given(shape=SHAPES, torch_tensor=st.booleans(), count=st.integers(1, 4))
def test_arrays_in_one_answer_span_no_more_than_its_limit_together(shape, torch_tensor, count):
    """Arrays and tensors whose shapes claim more than their buffers hold, or more than the limit in
    all: refused before the judge makes them."""
    items = np.prod(shape, dtype=object)
    data = memoryview(b"\0" * (4 * items)) if items * 4 <= (1 << 16) else memoryview(b"\0" * 16)
    node = ["tensor", "float32", shape, "cpu", 0, False] if torch_tensor else ["ndarray", "<f4", shape, 0]
    if torch_tensor:
        pytest.importorskip("torch")
    limit = 1 << 15
    try:
        values = wire.Decoder([data], limit=limit)(["list", [node] * count])
    except wire.WireError:
        return
    assert sum(spans(v) for v in values) <= limit


def test_an_answer_longer_than_its_limit_is_refused_from_its_length_alone():
    """The 8-byte length is read, and the message refused, before any of it is read or allocated."""
    read, write = os.pipe()
    try:
        os.write(write, struct.pack("<Q", wire.ANSWER_FLOOR + 1))
        with pytest.raises(wire.WireError, match="over the"):
            wire.receive(read, wire.ANSWER_FLOOR)
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize(
    "tree, said",
    [
        (["str", "x" * (wire.TREE_BYTES + 1)], "a tree of"),
        (["list", [["none"]] * (wire.NODES + 1)], "nodes"),
    ],
)
def test_a_tree_too_long_or_of_too_many_nodes_is_refused(tree, said):
    with pytest.raises(wire.WireError, match=said):
        values, buffers = wire.unpack(wire.pack(tree, []))
        wire.Decoder(buffers)(values)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(sorted(wire.TAGS)),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=30,
)


@given(tree=JSONISH)
@settings(max_examples=400, deadline=None)
def test_whatever_tree_a_worker_sends_the_judge_rebuilds_it_or_refuses_it(tree):
    """A determined student's trees (an unhashable key, a tag with the wrong arity, JSON nested past
    Python's recursion limit): the judge rebuilds what it can and refuses the rest as a WireError, the
    worker's fault; never another exception from its own code."""
    try:
        wire.Decoder([])(tree)
    except wire.WireError:
        pass
    with pytest.raises(wire.WireError):
        wire.Decoder([])(["dict", [[["list", []], ["none"]]]])  # a list as a dict's key
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(wire.WireError):
        wire.unpack(struct.pack("<II", len(deep), 2) + deep + b"[]")


def test_an_answer_may_be_as_large_as_the_arrays_it_was_given_times_the_ratio():
    small, large = np.zeros(4, np.float32), np.zeros((wire.ANSWER_FLOOR // 4 // 2,), np.float32)
    assert wire.answer_limit([[small], {}]) == wire.ANSWER_FLOOR
    assert wire.answer_limit([[large, {"out": large}], {}]) == wire.ANSWER_RATIO * 2 * large.nbytes


HOMEWORK = '''
import numpy as np


def numpy_forward(x, w, b):
    """Right, but it zeroes its inputs once done."""
    y = np.maximum(x @ w + b, 0)
    for arg in (x, w, b):
        arg[...] = 0
    return y


def numpy_steps(x, w, b):
    """Prints what it was given; given another shape, says so and dies."""
    import os
    import sys

    if x.shape != (2, 3):
        print("given a new shape; its stderr is", os.readlink("/proc/self/fd/2"), file=sys.stderr, flush=True)
        os._exit(3)
    print("given", x.tolist(), file=sys.stderr, flush=True)
    return x, x, x


def timed_call(fn, sync=None):
    """Right: the work and its sync inside the clock."""
    import time

    start = time.perf_counter()
    result = fn()
    if sync is not None:
        sync(result)
    return time.perf_counter() - start


def steady_state(fn, sync=None, trials=9, warmup=2):
    """A timer that lies: it never runs the work, and answers the 50 ms it expects."""
    return [0.05] * trials


def triton_bias_relu(a, b, block_size=256, out=None):
    """Writes its output into out=, and zeroes its input a."""
    out[...] = np.maximum(a + b, 0)
    a[...] = 0
    return out
'''


@pytest.fixture
def own_worker(tmp_path):
    """A worker for a file of this test's (not a student's: no sandbox needed), as the judge holds one."""
    (tmp_path / "homework.py").write_text(textwrap.dedent(HOMEWORK))
    command = [sys.executable, "-I", "-c", worker.launch(sys.path), str(tmp_path / "homework.py")]

    log = tmp_path / "worker.log"

    def start():  # its standard error drained into the log, as the judge's worker's is
        said = judge.stderr_into(log)
        try:
            return subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=said, start_new_session=True
            )
        finally:
            os.close(said)

    held = judge.Worker(start, None, log)
    yield held
    held.stop()


def test_the_judge_keeps_its_own_arguments_and_takes_back_only_out(own_worker):
    """A worker is a fresh interpreter by design (what it runs never shares the judge's process):
    what it wrote into an input stays there; what it wrote into out= comes back."""
    rng = np.random.default_rng(74)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 5), (5,)))
    kept = [a.copy() for a in (x, w, b)]
    y = own_worker.call("numpy_forward", (x, w, b), {})
    assert all(np.array_equal(a, k) for a, k in zip((x, w, b), kept)), "the worker's writes reached the judge"
    np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-6)
    out, a = np.zeros((4, 5), np.float32), kept[0] @ kept[1]
    before = a.copy()
    own_worker.call("triton_bias_relu", (a, kept[2]), {"out": out})
    np.testing.assert_allclose(out, np.maximum(before + kept[2], 0), rtol=1e-6)
    assert np.array_equal(a, before), "an input is the judge's; out= alone comes back"


def test_a_judge_that_allocates_past_its_memory_limit_fails_there(monkeypatch):
    """``grader._limit_memory``: a judge's heap is limited as it starts (here to 256 MiB): its
    allocation of 1 GiB fails in the judge, not on the machine. The judge stands in as a fresh Python
    process, since the limit binds the process it is set on."""
    monkeypatch.setattr(grader, "JUDGE_MEMORY_BYTES", 256 * 1024**2)
    code = (
        "import sys; sys.stdin.readline()\ntry:\n    b = bytearray(1 << 30)\nexcept MemoryError:\n    print('refused')"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    grader._limit_memory(process)
    said, _ = process.communicate("go\n", timeout=60)
    assert said.strip() == "refused"


def test_a_crash_quotes_what_its_own_call_printed_never_an_earlier_calls(own_worker):
    """An instructor's hidden test runs the student's code on inputs the student must not see: what
    the code printed there (those inputs) is never quoted by a later test's crash, only what the
    crashing call printed."""
    hidden = np.full((2, 3), 1234.5, np.float32)
    own_worker.call("numpy_steps", (hidden, hidden.T, hidden[0]), {})
    visible = np.ones((4, 3), np.float32)
    with pytest.raises(judge.isolation.Crashed) as crashed:
        own_worker.call("numpy_steps", (visible, visible.T, visible[0]), {})
    said = str(crashed.value)
    assert "given a new shape" in said and "code 3" in said, said
    assert "1234.5" not in said, said
    # From a determined student's attack: its stderr was the log file, whose path (read through
    # /proc/self/fd) named the grader's scratch folder. It is a pipe the judge drains into the log.
    assert "its stderr is pipe:[" in said and str(own_worker.log) not in said, said


def test_checkpoint_2s_timer_is_judged_in_a_graded_worker_and_a_constant_fails_it(own_worker):
    """Checkpoint 2's measurement hands the student's timed_call the judge's work and sync: their
    result crosses to the worker and back (a future did not: every honest timer failed when graded).
    A timer that answers a constant and never runs the work fails it."""
    from stackcheck.homework import checkpoints

    agrees, said = checkpoints.fixed_timer_agrees(judge.proxy(own_worker, "timed_call"))
    assert agrees, said
    liar = judge.proxy(own_worker, "steady_state")
    agrees, said = checkpoints.fixed_timer_agrees(lambda fn, sync=None: liar(fn, sync, trials=1)[0])
    assert not agrees and "0 times" in said, said


def test_every_request_is_a_named_message_the_worker_handles_by_its_fields():
    """Issue 74 item 8: the judge sends named messages, never positional tuples; each one the judge
    can send has a handler whose parameters are the message's fields, so a field added or renamed on
    one side fails here, not mid-grading."""
    import ast
    import dataclasses
    import inspect

    requests = {
        cls
        for cls in vars(wire).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls is not wire.Reply
    }
    assert requests and requests == set(worker.HANDLERS), "a request type without a handler, or the reverse"
    for message, handler in worker.HANDLERS.items():
        parameters = list(inspect.signature(handler).parameters)[1:]  # after the worker's state
        assert parameters == [f.name for f in dataclasses.fields(message)], (message.__name__, parameters)
    sent = [
        node
        for node in ast.walk(ast.parse(inspect.getsource(judge)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("_request", "_pickled", "_exchange")
        and node.args
        and isinstance(node.args[0], (ast.Tuple, ast.List))
    ]
    assert not sent, [ast.unparse(n) for n in sent]
