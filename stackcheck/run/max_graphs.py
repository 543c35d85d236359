"""MAX graphs of the suite, each compiled once per process (course §10.3, §10.4).

The *math* graph serves the numeric tests; the *structure* graph the IR and kernel tests.

Symbolic dimensions let one graph serve every shape. The math graph computes, from float32
inputs, A, Z, Y with MAX's built-in ops; Y again in bfloat16 and float16 (inputs cast inside
the graph, result cast back); and, when Mojo is available, Y with the Mojo custom op
``study_relu`` in place of the built-in relu. A cold compile takes about a minute on two
cores; MAX caches it on disk, so later sessions load it in seconds.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from stackcheck.impl import contract
from stackcheck.paths import data
from stackcheck.toolchains import background, mojo_build

_MODELS: dict = {}
_ARTIFACTS: dict = {}  # GPU compiles: (kind, impl ...) -> Future of MEF bytes
# One compile at a time in this process (the background service's "max-compile" lane); across
# processes (xdist workers) one compile per graph at a time (``_compile_lock``): the workers compile
# different graphs at once (``share``).
LANE = "max-compile"
LOW_PRECISION = ("bfloat16", "float16")


def _submit(fn, *args) -> concurrent.futures.Future:
    """Start ``fn`` on the background service; its futures are forgotten when the service closes,
    but for those done (a compiled model outlives the run that compiled it)."""
    service = background.service()
    service.forget_on_close(_MODELS, future_of=lambda entry: entry[1])  # (graph, future, names)
    service.forget_on_close(_ARTIFACTS)
    return service.submit(LANE, fn, *args)


def _input_types(ref, chains: int):
    from max.dtype import DType
    from max.graph import TensorType

    dims = (["N", "K"], ["K", "M"], ["M"])
    return [TensorType(DType.float32, [f"{d}{c}" for d in shape], device=ref) for c in range(chains) for shape in dims]


def _math_outputs(impl, mojo: bool, x, w, b, dtypes=LOW_PRECISION, float32=True) -> tuple[list, list[str]]:
    """The math graph's values: A, Z, Y; Y in each low precision, cast back; Y through the Mojo op.
    (``float32`` False, ``mojo`` False: Y in ``dtypes`` alone, a part of ``_in_parts``.)"""
    from max.dtype import DType
    from max.graph import ops

    outputs, names = (list(impl.max_steps(x, w, b)), ["a", "z", "y"]) if float32 else ([], [])
    for dtype in dtypes:
        low = getattr(DType, dtype)
        y_low = impl.max_steps(*(ops.cast(v, low) for v in (x, w, b)))[2]
        outputs.append(ops.cast(y_low, DType.float32))  # NumPy has no bfloat16: Y comes out as float32
        names.append(_low_precision_name(dtype, y_low.dtype.name))
    if mojo:
        outputs.append(impl.mojo_relu(outputs[1]))
        names.append("y_mojo")
    return outputs, names


def _structure_outputs(impl, mojo: bool, *values) -> tuple[list, list[str]]:
    """Y = ReLU(X @ W + b) alone, so the compiler may fuse it; and, from separate inputs (so the
    two chains share nothing), the same with the Mojo custom ReLU in place of the built-in one."""
    outputs, names = [impl.max_steps(*values[:3])[2]], ["y"]
    if mojo:
        outputs.append(impl.mojo_relu(impl.max_steps(*values[3:6])[1]))
        names.append("y_mojo")
    return outputs, names


def _special_outputs(impl, mojo: bool, z) -> tuple[list, list[str]]:
    """A float32 vector Z straight into the relus, so the values §10.4 sets apart (NaN, -0) reach them
    as given rather than through a matmul, which turns -0 into +0: the built-in relu ("y") and, with
    Mojo, the custom op ("y_mojo")."""
    from max.graph import ops

    outputs, names = [ops.relu(z)], ["y"]
    if mojo:
        outputs.append(impl.mojo_relu(z))
        names.append("y_mojo")
    return outputs, names


def _vector_type(ref):
    from max.dtype import DType
    from max.graph import TensorType

    return TensorType(DType.float32, ["R"], device=ref)


# graph: (its name, its input types for a device, its outputs from those inputs)
_GRAPHS = {
    "math": ("stackcheck_math", lambda ref, mojo: _input_types(ref, 1), _math_outputs),
    "structure": ("stackcheck_structure", lambda ref, mojo: _input_types(ref, 2 if mojo else 1), _structure_outputs),
    "special": ("stackcheck_special", lambda ref, mojo: [_vector_type(ref)], _special_outputs),
}


# a graph made of the others side by side, each on inputs of its own
_COMBINED = {"every": ("stackcheck_every_gpu", tuple(_GRAPHS))}


def _graph(graph_name: str, impl, mojo: bool, kind: str, outputs_of=None):
    """Graph ``graph_name`` built from ``impl``'s builders for the device of ``kind`` ("-gpu": the
    GPU; §10.3: the same graph, another device), with a session for that device; ``outputs_of`` in
    place of the graph's own outputs (a part of it, ``_in_parts``). "every": the math, structure and
    special graphs side by side (nothing shared, so each fuses as it does alone), their outputs named
    "math:y" and so on: what ``pytest -m cuda`` compiles, in one compile per GPU target."""
    from max.engine import InferenceSession
    from max.graph import DeviceRef, Graph

    device = device_of(kind)
    ref = DeviceRef.from_device(device)
    title, parts = _COMBINED[graph_name] if graph_name in _COMBINED else (_GRAPHS[graph_name][0], (graph_name,))
    types = [_GRAPHS[part][1](ref, mojo) for part in parts]
    extensions = [mojo_build.stable_package(impl.mojo_package())] if mojo else []  # a built package, never a folder
    with Graph(title, input_types=sum(types, []), custom_extensions=extensions) as graph:
        values, outputs, names = [value.tensor for value in graph.inputs], [], []
        for part, taken in zip(parts, types):
            mine, values = values[: len(taken)], values[len(taken) :]
            more, more_names = (outputs_of or _GRAPHS[part][2])(impl, mojo, *mine)
            outputs += more
            names += more_names if len(parts) == 1 else [f"{part}:{n}" for n in more_names]
        graph.output(*outputs)
    return graph, names, InferenceSession(devices=[device])


def _low_precision_name(dtype: str, returned: str) -> str:
    """The math graph's name for Y computed in ``dtype``, which max_steps gave back as ``returned``."""
    return f"y_{dtype}" if returned == dtype else f"y_{dtype} as {returned}"


def low_precision_y(outputs: dict, dtype: str) -> tuple:
    """(Y computed in ``dtype``, the dtype max_steps gave it back in), from the math graph's outputs
    (each Y cast to float32 there: NumPy has no bfloat16). A dtype MAX refused here skips the test."""
    for name, y in outputs.items():
        if isinstance(y, Refused) and y.dtype == dtype:
            import pytest

            pytest.skip(y.reason)
        if name == f"y_{dtype}" or name.startswith(f"y_{dtype} as "):
            return y, name.partition(" as ")[2] or dtype
    raise KeyError(f"the math graph has no Y in {dtype}: {sorted(outputs)}")


def on_device(kind: str, device: str) -> str:
    """Graph ``kind`` for our device name: "math" on "cuda" is "math-gpu" (the same graph, built for
    ``Accelerator()``, §10.3)."""
    return kind if device == "cpu" or kind.endswith("-gpu") or kind.startswith("sm_") else f"{kind}-gpu"


def device_of(kind: str):
    """The MAX device graph ``kind`` runs on: ``Accelerator()`` (the first GPU) for a "-gpu" kind."""
    from max.driver import CPU, Accelerator

    return Accelerator() if kind.endswith("-gpu") else CPU()


_BUILDERS = {
    kind: (lambda impl, mojo, graph_name=name, kind=kind: _graph(graph_name, impl, mojo, kind))
    for name in (*_GRAPHS, *_COMBINED)
    for kind in (name, f"{name}-gpu")
}


def with_mojo() -> bool:
    """Whether the graphs include the Mojo custom op (the mojo stack is installed)."""
    from stackcheck.stacks.available import stack_missing

    return stack_missing("mojo") is None


def _key(kind: str, impl):
    return (kind, impl.max_steps, impl.mojo_relu, impl.mojo_package, with_mojo())


def share(kinds, worker: str, workers: int) -> list[str]:
    """The graphs xdist worker ``worker`` ("gw2") of ``workers`` compiles when the session starts:
    every ``workers``-th of ``kinds`` in sorted order, so the workers compile different graphs at
    once; each compiles the others it runs when it runs them, from MAX's disk cache by then (its
    compile waits only for the worker compiling that graph, ``_compile_lock``)."""
    return sorted(kinds)[int(worker.removeprefix("gw")) :: max(workers, 1)]


def prefetch(kind: str, impl) -> None:
    """Build graph ``kind`` now and compile it on a background thread (MAX releases the GIL while
    it compiles), so a cold compile overlaps the tests that run before the first MAX test. A kind
    naming a GPU target ("sm_90", "sm_75/every") compiles for it in a child (``compiled_for_gpu``)."""
    if kind.startswith("sm_"):
        if _key(kind, impl) not in _ARTIFACTS:
            _ARTIFACTS[_key(kind, impl)] = _submit(_compile_in_subprocess, impl, kind)
        return
    key = _key(kind, impl)
    if key in _MODELS:
        return
    try:
        graph, names, session = _BUILDERS[kind](impl, with_mojo())
    except Exception as error:  # a broken builder fails the tests that use the graph, not collection
        failed = concurrent.futures.Future()
        failed.set_exception(error)
        _MODELS[key] = (None, failed, None)
        return
    future = _submit(_load, session, graph, kind, impl)
    _MODELS[key] = (graph, future, names)


def _load(session, graph, kind: str, impl):
    """The compiled graph; a math graph MAX will not compile whole is tried in parts (``_in_parts``)."""
    with _compile_lock(_lock_name(kind, impl)):
        try:
            return session.load(graph)
        except Exception as whole:
            if kind.removesuffix("-gpu") != "math":
                raise
            return _in_parts(session, kind, impl, whole)


class Refused:
    """Y in a low precision that MAX would not compile for this device: its tests skip with ``reason``."""

    def __init__(self, dtype: str, reason: str):
        self.dtype, self.reason = dtype, reason


class _Parts:
    """The math graph as graphs compiled apart: float32 (and the Mojo op), then each low precision."""

    def __init__(self, parts: list, refused: dict):
        self.parts, self.refused = parts, refused

    def outputs(self, buffers) -> dict:
        from max.driver import CPU

        found = dict(self.refused)
        for compiled, names in self.parts:
            found |= {name: out.to(CPU()).to_numpy() for name, out in zip(names, compiled.execute(*buffers))}
        return found


def _in_parts(session, kind: str, impl, whole: Exception) -> _Parts:
    """The try-compile probe: when the math graph does not compile whole (a GPU whose kernels lack a
    dtype), its float32 chain compiles alone and each low precision in a graph of its own, so one
    dtype the device cannot run skips its own tests (``low_precision_y``) and fails no others."""
    import functools

    mojo = with_mojo()
    graph, names, _ = _graph("math", impl, mojo, kind, functools.partial(_math_outputs, dtypes=()))
    try:
        parts = [(session.load(graph), names)]
    except Exception:
        raise whole from None  # not a dtype's doing: the whole graph's error is the one to read
    refused = {}
    for dtype in LOW_PRECISION:
        low = functools.partial(_math_outputs, dtypes=(dtype,), float32=False)
        graph, names, _ = _graph("math", impl, False, kind, low)
        try:
            parts.append((session.load(graph), names))
        except Exception as error:
            reason = f"MAX did not compile Y in {dtype} for {kind}: {type(error).__name__}: {str(error)[:300]}"
            refused[f"y_{dtype}"] = Refused(dtype, reason)
    return _Parts(parts, refused)


def _lock_name(kind: str, impl) -> str:
    """What a compile of graph ``kind`` is, the same in every process: the graph, the implementation
    whose builders made it, whether it holds the Mojo op."""
    module = impl.module
    return f"{kind}|{getattr(module, '__file__', None) or getattr(module, '__name__', 'reference')}|{with_mojo()}"


@contextlib.contextmanager
def _compile_lock(what: str):
    """Held, across processes, while graph ``what`` compiles: another process that needs the same
    graph waits, then loads it from MAX's disk cache. Different graphs compile at once (the Mojo package
    they share is precompiled once, ``mojo_build.stable_package``)."""
    folder = data.cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(what.encode()).hexdigest()[:16]
    with open(folder / f"max-compile-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def built(kind: str, impl):
    """The graph ``kind`` as ``impl``'s builders record it, without waiting for its compile (the IR a
    test reads is there before the compiler has run)."""
    prefetch(kind, impl)
    graph, future, _ = _MODELS[_key(kind, impl)]
    return graph if graph is not None else _result(future)


def model(kind: str, impl):
    """(graph, compiled model, output names) of graph ``kind``, built from ``impl``'s builders once."""
    prefetch(kind, impl)
    graph, future, names = _MODELS[_key(kind, impl)]
    return graph, _result(future), names


def _result(future):
    """What ``future`` holds, or what building or compiling raised, with the stubs it met recorded for
    the test now running (the build ran when the session started)."""
    try:
        return future.result()
    except NotImplementedError as error:
        contract.recall_stubs(error)
        raise


def compile_then_init(kind: str, impl):
    """§10.3's two steps, apart: (the artifact ``compile()`` gives, the model ``init()`` makes of it),
    in a session of its own, for graph ``kind`` (whose compile MAX has cached by then)."""
    from max.engine import InferenceSession

    graph, _, _ = model(kind, impl)
    session = InferenceSession(devices=[device_of(kind)])
    with _compile_lock(_lock_name(kind, impl)):
        artifact = session.compile(graph)
    return artifact, session.init(artifact)


def execute(kind: str, impl, x, w, b, runnable=None) -> dict[str, np.ndarray]:
    """Run graph ``kind`` (or ``runnable``, a model of it) on float32 NumPy X, W, b (every chain gets
    the same); outputs as float32 NumPy."""
    graph, _, _ = model(kind, impl)
    return run(kind, impl, *[x, w, b] * (len(graph.inputs) // 3), runnable=runnable)


def run(kind: str, impl, *arrays, runnable=None) -> dict[str, np.ndarray]:
    """Run graph ``kind`` (or ``runnable``, a model of it) on float32 NumPy ``arrays``, one per
    input; outputs by name, as float32 NumPy."""
    from max.driver import CPU, Buffer

    _, compiled, names = model(kind, impl)
    compiled = runnable or compiled
    device = device_of(kind)
    buffers = [Buffer.from_numpy(np.ascontiguousarray(v, dtype=np.float32)).to(device) for v in arrays]
    if isinstance(compiled, _Parts):
        return compiled.outputs(buffers)
    return {name: out.to(CPU()).to_numpy() for name, out in zip(names, compiled.execute(*buffers))}


def compiled_for_gpu(impl, target: str) -> bytes:
    """A GPU graph compiled for an NVIDIA GPU on any machine, in MAX's compile-only virtual device
    mode, as MEF bytes; started by ``prefetch(target, impl)``. ``target`` is an architecture
    ("sm_90": graph "structure-gpu" for it) or an architecture and "every" ("sm_75/every": the
    graph of every GPU graph, "every-gpu")."""
    prefetch(target, impl)
    return _result(_ARTIFACTS[_key(target, impl)])


def _compile_in_subprocess(impl, target: str) -> bytes:
    """In a process of its own: the virtual device mode is process-wide, and a GPU compile cannot
    follow a CPU session in one process. The child grades like this process: in homework mode it
    builds the same Impl (assigned names never fall back), and a stub or a borrowed function it
    meets is raised here as what it is, not as a failed compile."""
    spec = getattr(impl.module, "__file__", None) or ""
    assigned = ",".join(sorted(impl.assigned)) if impl.assigned is not None else "-"
    with tempfile.TemporaryDirectory() as folder:  # the child takes the compile lock once its graph is built
        out = Path(folder) / "graph.mef"
        done = subprocess.run(
            [sys.executable, "-m", "stackcheck.run.max_graphs", target, str(out), spec, assigned],
            capture_output=True,
            text=True,
            timeout=900,
        )
        raised = out.with_suffix(".raised.json")
        if raised.exists():
            _raise_as_the_child_did(json.loads(raised.read_text()))
        if done.returncode:
            raise RuntimeError(f"compiling the MAX graph for {target} failed:\n" + done.stderr.strip()[-1500:])
        return out.read_bytes()


_CROSSING = {kind.__name__: kind for kind in (contract.NotAttempted, contract.Borrowed, contract.TimedOut)}


def _raise_as_the_child_did(raised: dict) -> None:
    error = _CROSSING.get(raised["kind"], NotImplementedError)(raised["message"])
    error.stubs = tuple(raised["stubs"])
    raise error


def _compile_for_gpu(target: str, out: str, spec: str, assigned: str) -> None:
    from max import driver

    from stackcheck.impl import integrity
    from stackcheck.impl.loader import Impl, load_module

    arch, _, every = target.partition("/")
    driver.set_virtual_device_api("cuda")
    driver.set_virtual_device_target_arch(arch)
    driver.set_virtual_device_count(1)
    names = None if assigned == "-" else frozenset(filter(None, assigned.split(",")))
    borrowing = integrity.borrowed(spec) if names and spec else None  # read before any of it runs
    module = load_module(spec) if spec else None
    if names and module is not None:
        borrowing = integrity.with_reached(borrowing, module, names)
    impl = Impl(module, names, borrowing)
    try:
        build = _BUILDERS["every-gpu" if every else "structure-gpu"]
        graph, _, session = build(impl, with_mojo())
    except (NotImplementedError, contract.Borrowed, contract.TimedOut) as error:
        report = {"kind": type(error).__name__, "message": str(error), "stubs": sorted(contract.STUBS_CALLED)}
        Path(out).with_suffix(".raised.json").write_text(json.dumps(report))
        return
    with _compile_lock(_lock_name(target, impl)):  # only the compile waits: a stub is met at once
        session.compile(graph).export_mef(out)


if __name__ == "__main__":  # python -m stackcheck.run.max_graphs TARGET OUT.mef IMPL ASSIGNED|-: see compiled_for_gpu
    _compile_for_gpu(*sys.argv[1:5])
    # MAX 26.7 aborts at interpreter shutdown after a virtual-device compile ("terminate called
    # without an active exception", 9 runs in 15 here), with the MEF already written: skip teardown.
    os._exit(0)
