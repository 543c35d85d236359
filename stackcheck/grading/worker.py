"""The worker of a graded submission (``stackcheck grade``): the only process that imports the
student's file. It runs sandboxed (stackcheck.grading.sandbox.Jail's worker policy) and serves the
judge's requests over its standard input and output (stackcheck.grading.wire): load the file, call one
of its functions with the judge's arguments, or run one of the suite's evidence helpers on it. It
answers with data only; the judge rebuilds and judges every value itself.

    python -I -c CODE FILE      (CODE: launch(), below, with the judge's import path)
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback

from stackcheck.grading import wire

CHANNEL: dict[str, int] = {}  # the judge's pipe, moved off fds 0 and 1 (the submission prints to stderr)


def main(argv: list[str]) -> int:
    from stackcheck.impl.loader import JUDGE

    os.environ.pop(JUDGE, None)  # the one process that imports the submission
    CHANNEL["in"], CHANNEL["out"] = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    for fd in (CHANNEL["in"], CHANNEL["out"]):
        os.set_inheritable(fd, False)
    sys.stdout = sys.stderr
    state = {"file": argv[0], "module": None}
    _STATE_FOR_PICKLE[:] = [state]
    _serve(state, until_reply=False)
    return 0


def _serve(state: dict, until_reply: bool):
    """Answer requests until the judge closes the channel (or, inside a callback, until its reply comes)."""
    while True:
        try:
            request = pickle.loads(wire.receive(CHANNEL["in"]))
        except EOFError:
            os._exit(0)
        if isinstance(request, wire.Reply):
            if until_reply:
                return request
            continue
        handler = HANDLERS.get(type(request))
        if handler is None:
            answer = (["error", ["str", f"unknown request {type(request).__name__}"]], [])
        else:
            answer = handler(state, **wire.fields_of(request))
        wire.send(CHANNEL["out"], wire.pack(*answer))


def _load(state: dict, assigned):
    from stackcheck.impl import loader

    try:
        module = loader.load_module(state["file"])
        if assigned != []:  # [] is the launcher's empty file (kernel_source.replay): it assigns nothing
            loader.check_names(module, state["file"], frozenset(assigned) if assigned is not None else None)
    except loader.ImplError as error:
        return ["load_error", str(error)], []
    except BaseException as error:  # noqa: BLE001 - SystemExit and the like at import: said, not obeyed
        return ["load_error", f"--impl {state['file']}: importing it raised {type(error).__name__}: {error}"], []
    state["module"] = module
    names = sorted(n for n in loader.SURFACE if callable(getattr(module, n, None)))
    return ["loaded", names, loader.public_functions(module), module.__name__], []


def _function(state: dict, name: str):
    module = state["module"]
    fn = getattr(module, name, None) if module is not None else None
    if not callable(fn):
        raise NotImplementedError(f"{name} is not written yet")
    return fn


def _call(state: dict, name: str, args: tuple, kwargs: dict, grad: bool, compile: dict | None = None):
    """The student's function called on the judge's arguments (with ``compile``, through
    ``torch.compile(fn, **compile)``, made once: stackcheck.grading.judge.compiled); a kernel function's
    Triton launches recorded as data besides (stackcheck.impl.kernel_source), for the judge to check
    and launch again."""
    import contextlib

    from stackcheck.impl import kernel_source

    encoder = Encoder(state, [list(args), kwargs])
    before, compiled = encoder.snapshot(), _compiles()
    recorder = None
    try:
        with _grad_mode(grad):
            if name in kernel_source.KERNEL_FUNCTIONS and "triton" in sys.modules:
                record = kernel_source.recording(args, kwargs)
            else:
                record = contextlib.nullcontext()
            with record as recorder:
                value = _callable(state, name, compile)(*args, **kwargs)
        tree = ["returned", encoder.package(value) if _returns_path(name) else encoder(value)]
        program = encoder(recorder.program(value)) if recorder is not None else ["none"]
    except BaseException as error:  # noqa: BLE001 - every failure of the student's code crosses back
        tree, program = ["raised", encoder.exception(error)], ["none"]
    counts = [after - was for after, was in zip(_compiles(), compiled)]
    return [*tree, encoder.written(before), counts, program], encoder.buffers


def _callable(state: dict, name: str, compile: dict | None):
    fn = _function(state, name)
    if compile is None:
        return fn
    import torch

    key = (name, tuple(sorted(compile.items())))
    made = state.setdefault("compiled", {})
    if key not in made:
        made[key] = torch.compile(fn, **compile)
    return made[key]


def _returns_path(name: str) -> bool:
    from stackcheck.impl import contract

    task = contract.TASKS.get(name)
    return task is not None and task.form == contract.PATH


def _package_probe(state: dict, probe: str, name: str, files: list, args: tuple):
    """A launcher's request: a package's files written into a folder of its own, and one of the
    suite's probes (stackcheck.run.custom_ops) run on it with the judge's arguments."""
    import importlib
    import tempfile
    from pathlib import Path

    from stackcheck.impl import mojo_source

    encoder = Encoder(state, [list(args)])
    module, _, function = probe.partition(":")
    try:
        if module != mojo_source.PROBES:
            raise ValueError(f"not one of the suite's package probes: {probe}")
        path = mojo_source.written(mojo_source.shipped(name, files), Path(tempfile.mkdtemp(prefix="package-")))
        tree = ["returned", encoder(getattr(importlib.import_module(module), function)(path, *args))]
    except BaseException as error:  # noqa: BLE001
        tree = ["raised", encoder.exception(error)]
    return [*tree, [], [0, 0], ["none"]], encoder.buffers


def _replay(state: dict, plan: dict, args: tuple, kwargs: dict):
    """The launcher's one request (a worker whose file is empty): the judge's checked kernels launched
    on the judge's arguments (stackcheck.impl.kernel_source.replay)."""
    from stackcheck.impl import kernel_source

    encoder = Encoder(state, [list(args), kwargs])
    before = encoder.snapshot()
    try:
        tree = ["returned", encoder(kernel_source.replay(plan, args, kwargs))]
    except BaseException as error:  # noqa: BLE001
        tree = ["raised", encoder.exception(error)]
    return [*tree, encoder.written(before), [0, 0], ["none"]], encoder.buffers


def _export(state: dict, name: str, args: tuple, kwargs: dict):
    """The student's JAX function exported for these shapes (``jax.export``, serialized StableHLO): the
    judge runs and reads that program itself, inside its own trace."""
    import jax

    encoder = Encoder(state, [])
    try:
        exported = jax.export.export(jax.jit(_function(state, name)))(*args, **kwargs)
        tree = ["returned", ["bytes", encoder._buffer(exported.serialize())]]
    except BaseException as error:  # noqa: BLE001
        tree = ["raised", encoder.exception(error)]
    return [*tree, [], [0, 0], ["none"]], encoder.buffers


def _reset(state: dict):
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()
    return ["returned", ["none"], [], [0, 0], ["none"]], []


def _grad_mode(enabled: bool):
    import contextlib

    torch = sys.modules.get("torch")
    return torch.set_grad_enabled(enabled) if torch is not None else contextlib.nullcontext()


JAX_COMPILES = [0]  # XLA compiles in this process, once jax is imported (its monitoring events)


def _compiles() -> tuple[int, int]:
    """(graphs Dynamo compiled, programs XLA compiled) so far: what a call's compiles are counted from."""
    graphs = 0
    if "torch._dynamo" in sys.modules:
        from torch._dynamo.utils import counters

        graphs = counters["stats"]["unique_graphs"]
    if "jax" in sys.modules and not JAX_COMPILES[1:]:
        import jax.monitoring
        from jax._src.dispatch import BACKEND_COMPILE_EVENT

        def listener(event: str, duration: float, **kwargs) -> None:
            if event == BACKEND_COMPILE_EVENT:
                JAX_COMPILES[0] += 1

        jax.monitoring.register_event_duration_secs_listener(listener)
        JAX_COMPILES.append(listener)
    return graphs, JAX_COMPILES[0]


def _evidence(state: dict, helper: str, name: str, args: tuple, kwargs: dict, grad: bool):
    """One of the suite's helpers (``module:function``) run on the student's function here: what it
    reads needs the function in this process (a dispatch mode, a trace, a compile)."""
    import importlib

    encoder = Encoder(state, [list(args), kwargs])
    module, _, function = helper.partition(":")
    compiled = _compiles()
    try:
        if not module.startswith("stackcheck."):
            raise ValueError(f"not a helper of the suite: {helper}")
        with _grad_mode(grad):
            value = getattr(importlib.import_module(module), function)(_function(state, name), *args, **kwargs)
        tree = ["returned", encoder(value)]
    except BaseException as error:  # noqa: BLE001
        tree = ["raised", encoder.exception(error)]
    counts = [after - was for after, was in zip(_compiles(), compiled)]
    return [*tree, [], counts, ["none"]], encoder.buffers


HANDLERS = {
    wire.Load: _load,
    wire.Call: _call,
    wire.Evidence: _evidence,
    wire.Export: _export,
    wire.Reset: _reset,
    wire.Replay: _replay,
    wire.Package: _package_probe,
}  # each request the judge sends, by its message's type: its fields are the handler's parameters


class Callback:
    """A function of the judge's, handed to the student's code: calling it asks the judge to run it."""

    def __init__(self, state: dict, index: int):
        self.state, self.index = state, index

    def __call__(self, *args, **kwargs):
        encoder = Encoder(self.state, [])
        tree = ["callback", self.index, encoder(list(args)), encoder(kwargs)]
        wire.send(CHANNEL["out"], wire.pack(tree, encoder.buffers))
        reply = _serve(self.state, until_reply=True)
        if reply.raised:
            raise reply.value
        return reply.value


def restore_callback(index: int):
    return Callback(_STATE_FOR_PICKLE[0], index)


def restore_surface(name: str):
    return _function(_STATE_FOR_PICKLE[0], name)


def restore_jax(array, platform: str):
    import jax

    devices = [d for d in jax.devices() if d.platform == platform] or jax.devices()
    return jax.device_put(array, devices[0])


_STATE_FOR_PICKLE: list[dict] = []


class Encoder:
    """Encodes what the student's code returned as the judge's data: tagged nodes and buffers."""

    def __init__(self, state: dict, args: list):
        self.state, self.args, self.buffers = state, args, []
        self.arrays = list(_arrays_in(args, ()))

    def _buffer(self, data: bytes) -> int:
        self.buffers.append(bytes(data))
        return len(self.buffers) - 1

    def __call__(self, value, depth: int = 0):
        if depth > wire.DEPTH - 2:
            return ["opaque", "nesting", "too deep"]
        kind = type(value)
        module = kind.__module__
        if value is None:
            return ["none"]
        if kind is bool:
            return ["bool", value]
        if kind is int:
            return ["int", str(value)]
        if kind is float:
            return ["float", repr(value)]
        if kind is str:
            return ["str", value]
        if kind is bytes:
            return ["bytes", self._buffer(value)]
        if kind in (tuple, list):
            return [kind.__name__, [self(v, depth + 1) for v in value]]
        if kind is dict:
            return ["dict", [[self(k, depth + 1), self(v, depth + 1)] for k, v in value.items()]]
        if module == "numpy" and kind.__name__ == "ndarray":
            return self._view(value) or self._numpy(value)
        if module.startswith("numpy") and hasattr(value, "dtype") and getattr(value, "shape", None) == ():
            return ["npscalar", _dtype_name(value.dtype), self._buffer(value.tobytes())]
        if module.startswith("torch") and kind.__name__ in ("Tensor", "Parameter"):
            return self._view(value) or self._tensor(value)
        if module.startswith(("jax", "jaxlib")) and hasattr(value, "devices") and hasattr(value, "dtype"):
            return self._jax(value)
        name = getattr(value, "__name__", None)
        if callable(value) and isinstance(name, str) and getattr(self.state["module"], name, None) is value:
            return ["callable", name]
        return ["opaque", f"{module}.{kind.__qualname__}", _short(value)]

    def package(self, value):
        """A returned Mojo package as its files (stackcheck.impl.mojo_source): the judge never gets a path."""
        from stackcheck.impl import mojo_source

        name, files = mojo_source.read(value)
        return ["package", name, [[rel, self._buffer(data)] for rel, data in files]]

    def _numpy(self, value):
        import numpy as np

        value = np.array(value, order="C", copy=True)  # ascontiguousarray would make a 0-d array 1-d
        dtype = _dtype_name(value.dtype)
        if value.dtype.hasobject:
            return ["opaque", "numpy.ndarray of objects", _short(value)]
        return ["ndarray", dtype, list(value.shape), self._buffer(value.tobytes())]

    def _tensor(self, value):
        import torch

        dtype = str(value.dtype).removeprefix("torch.")
        if value.layout != torch.strided or dtype not in wire.TORCH_DTYPES:
            return ["opaque", f"torch.Tensor ({value.layout}, {value.dtype})", _short(value)]
        data = value.detach().contiguous().cpu()
        raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
        return ["tensor", dtype, list(value.shape), str(value.device), self._buffer(raw), bool(value.requires_grad)]

    def _jax(self, value):
        import numpy as np

        try:
            host = np.asarray(value)
            platform = next(iter(value.devices())).platform
        except Exception:  # noqa: BLE001 - a tracer or a deleted array
            return ["opaque", f"{type(value).__module__}.{type(value).__qualname__}", _short(value)]
        node = self._numpy(host)
        return ["jax", *node[1:], platform]

    def _view(self, value):
        """A result that shares memory with one of the call's arrays: ["view", path, shape, strides, offset]."""
        for path, arg in self.arrays:
            if value is arg:
                return ["view", list(path), list(_shape_of(arg)), list(_strides_of(arg)), _offset_of(arg)]
            relation = _shares(value, arg)
            if relation is not None:
                return ["view", list(path), *relation]
        return None

    def exception(self, error: BaseException):
        bases = [c.__name__ for c in type(error).__mro__]
        module = self.state.get("module")
        own = os.path.abspath(getattr(module, "__file__", None) or self.state["file"])
        frames = [
            [os.path.basename(f.filename), f.lineno or 0, f.name]
            for f in traceback.extract_tb(error.__traceback__)
            if os.path.abspath(f.filename) == own
        ]
        try:
            message = str(error)
        except Exception:  # noqa: BLE001 - a __str__ that raises
            message = f"<{type(error).__name__} whose message cannot be printed>"
        text = "".join(traceback.format_exception(error)[-12:])
        return ["exception", bases, message[:8000], frames, text[-4000:]]

    def snapshot(self) -> list:
        return [(path, _memory(arg)) for path, arg in self.arrays]

    def written(self, before: list) -> list:
        """The arguments whose memory the call changed: [path, bytes of their whole memory]."""
        changed = []
        for (path, arg), (_, old) in zip(self.arrays, before):
            new = _memory(arg)
            if new != old:
                changed.append([list(path), self._buffer(new)])
        return changed


def _dtype_name(dtype) -> str:
    """How the judge names a NumPy dtype (wire.Decoder._numpy_dtype): its code, or an ml_dtypes name."""
    return dtype.str if dtype.kind in wire.NUMPY_KINDS else dtype.name


def _arrays_in(value, path):
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ == "ndarray":
        yield path, value
    elif kind.__module__.startswith("torch") and kind.__name__ in ("Tensor", "Parameter"):
        yield path, value
    elif kind in (list, tuple):
        for i, v in enumerate(value):
            yield from _arrays_in(v, (*path, i))
    elif kind is dict:
        for k, v in value.items():
            if isinstance(k, str):
                yield from _arrays_in(v, (*path, k))


def _memory(arg) -> bytes:
    if type(arg).__module__ == "numpy":
        return arg.tobytes()
    import torch

    storage = arg.untyped_storage()
    return torch.empty(0, dtype=torch.uint8, device=arg.device).set_(storage).cpu().numpy().tobytes()


def _shape_of(arg):
    return tuple(arg.shape)


def _strides_of(arg):
    if type(arg).__module__ == "numpy":
        return tuple(s // arg.itemsize for s in arg.strides)
    return tuple(arg.stride())


def _offset_of(arg) -> int:
    return 0 if type(arg).__module__ == "numpy" else arg.storage_offset()


def _shares(value, arg):
    """(shape, strides, offset) of ``value`` as a view into ``arg``'s memory (elements), or None."""
    if type(value).__module__ != type(arg).__module__.split(".")[0] and not (
        type(value).__module__.startswith("torch") and type(arg).__module__.startswith("torch")
    ):
        return None
    if type(arg).__module__ == "numpy":
        import numpy as np

        if not (arg.flags.c_contiguous and value.dtype == arg.dtype and np.shares_memory(value, arg)):
            return None
        start = value.__array_interface__["data"][0] - arg.__array_interface__["data"][0]
        if start % arg.itemsize or any(s % arg.itemsize or s < 0 for s in value.strides):
            return None
        return list(value.shape), [s // arg.itemsize for s in value.strides], start // arg.itemsize
    if value.dtype != arg.dtype or value.device != arg.device:
        return None
    if value.untyped_storage().data_ptr() != arg.untyped_storage().data_ptr():
        return None
    return list(value.shape), list(value.stride()), value.storage_offset()


def _short(value) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # noqa: BLE001
        return "?"


def launch(path: list[str]) -> str:
    """The worker's ``python -I -c`` code, for a judge whose import path is ``path``."""
    return imports(path) + "from stackcheck.grading import worker; sys.exit(worker.main(sys.argv[1:]))"


def imports(path: list[str]) -> str:
    """Code that gives a ``python -I`` the judge's imports: ``path`` first, and the user site folder's
    .pth files where this Python processed them. -I leaves that folder out, and a user install's packages
    need its .pth files (an editable stackcheck is a finder one installs). -I also ignores
    PYTHONDONTWRITEBYTECODE: the worker writes no compiled file into the copy either."""
    from stackcheck.paths import data

    user = data.user_site()
    sites = [user] if user in path else []
    return (
        f"import site, sys; sys.dont_write_bytecode = True; sys.path[:0] = {path!r}; "
        f"[site.addsitedir(d) for d in {sites!r}]; "
    )
