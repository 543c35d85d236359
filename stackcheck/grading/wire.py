"""What crosses between a graded submission's worker and the judge (``stackcheck grade``).

Messages are framed (an 8-byte length, at most ``LIMIT`` bytes). The judge sends its requests as
pickles of the named messages below (``Load``, ``Call``, ...): the worker runs the submission anyway,
so nothing the judge sends can cost it anything.
The worker answers in a format the judge decodes without running anything: a JSON tree of tagged
nodes and raw buffers. Arrays are rebuilt from their bytes with a dtype from an allow-list; a result
that is a view of an argument is rebuilt as the same view of the judge's own argument (bounds
checked by torch, or here for NumPy); an exception is rebuilt as its nearest builtin class with its
message; anything else is an ``Opaque`` naming its type, which no contract accepts.

What the worker sends is bounded before the judge allocates it: a message's length against the
call's ``answer_limit`` (read from its 8-byte prefix), its JSON tree's length and node count, and the
bytes every array, tensor and view it rebuilds spans (a 78-byte stride-0 view of 2 GB is refused as
a 2 GB answer would be).
"""

from __future__ import annotations

import builtins
import json
import os
import struct
from dataclasses import dataclass, fields

LIMIT = 512 * 1024**2  # one message: the largest array a test hands a student's function is ~100 MB
DEPTH = 64  # nesting of a decoded tree
TREE_BYTES = 8 * 1024**2  # an answer's JSON tree (evidence: op lists, program text, far below this)
NODES = 200_000  # nodes of one decoded tree
TEXT_CHARS = 8000  # an exception's message as the judge keeps it (the worker sends no more)
ANSWER_FLOOR = 64 * 1024**2  # bytes an answer may always hold and its arrays span
ANSWER_RATIO = 4  # ... or this many times the bytes of the arrays the call was given
NUMPY_KINDS = "biufc"  # bool, ints, floats, complex: never objects, strings or structures
TORCH_DTYPES = (
    "float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool complex64 complex128 float8_e4m3fn float8_e5m2"
).split()
JAX_EXTRA_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")  # ml_dtypes names numpy resolves once imported


TAGS = frozenset(
    "none bool int float str bytes tuple list dict opaque ndarray npscalar tensor jax view callable package "
    "exception".split()
)  # the node kinds a tree may hold (each one Decoder method)


# ---- the judge's requests, each a named message; the worker answers each with one tagged tree ----


@dataclass(frozen=True)
class Load:
    """Import the submission's file; ``assigned``: the functions it must define (None: its part's,
    []: the launcher's empty file)."""

    assigned: list[str] | None


@dataclass(frozen=True)
class Call:
    """Call the submission's function ``name`` on the judge's arguments, in ``grad`` mode, compiled
    with ``compile``'s options (None: as it is)."""

    name: str
    args: tuple
    kwargs: dict
    grad: bool
    compile: dict | None = None


@dataclass(frozen=True)
class Evidence:
    """Run the suite's evidence ``helper`` on the submission's function ``name`` and these arguments."""

    helper: str
    name: str
    args: tuple
    kwargs: dict
    grad: bool


@dataclass(frozen=True)
class Export:
    """Export the submission's JAX function ``name`` for arguments of these shapes and dtypes."""

    name: str
    args: tuple
    kwargs: dict


@dataclass(frozen=True)
class Reset:
    """Reset Dynamo's caches, as the judge's test just did in its own process."""


@dataclass(frozen=True)
class Replay:
    """The launcher's request: the judge's checked kernel ``plan`` launched on the judge's arguments."""

    plan: dict
    args: tuple
    kwargs: dict


@dataclass(frozen=True)
class Package:
    """The launcher's request: a Mojo package's ``files`` written into a folder of its own, and the
    suite's ``probe`` run on it."""

    probe: str
    name: str
    files: list
    args: tuple


@dataclass(frozen=True)
class Reply:
    """The judge's answer to the worker's call back: what the judge's function returned, or raised."""

    raised: bool
    value: object


def fields_of(message) -> dict:
    """A message's fields by name, as they are (no copy)."""
    return {f.name: getattr(message, f.name) for f in fields(message)}


class WireError(Exception):
    """A message that is not of this format: the worker is misbehaving (or was tampered with)."""


class Opaque:
    """A value the worker returned that is not data the judge rebuilds (a module, a generator, ...)."""

    def __init__(self, kind: str, text: str):
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"<{self.kind} from the submission: {self.text}>"


class RemoteError(Exception):
    """Stands for an exception class the judge does not rebuild; its builtin base is mixed in."""


# ---- framing ------------------------------------------------------------------------------


def send(fd: int, payload: bytes) -> None:
    data = struct.pack("<Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int, limit: int = LIMIT) -> bytes:
    size = struct.unpack("<Q", _exactly(fd, 8))[0]
    if size > limit:
        raise WireError(f"a message of {size} bytes, over the {limit}-byte limit of this answer")
    return _exactly(fd, size)


def answer_limit(arguments) -> int:
    """The most bytes an answer to a call on ``arguments`` may hold, and any array rebuilt from it
    span: what a call honestly returns is of the order of what it was given (ANSWER_RATIO times its
    arrays' bytes), never less than ANSWER_FLOOR."""
    return max(ANSWER_FLOOR, ANSWER_RATIO * array_bytes(arguments))


def array_bytes(value, depth: int = 0) -> int:
    """The bytes of the NumPy, torch and JAX arrays in ``value`` (lists, tuples and dicts opened)."""
    if depth > DEPTH:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(array_bytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(array_bytes(v, depth + 1) for v in value.values())
    module = type(value).__module__.split(".")[0]
    if module in ("numpy", "jax", "jaxlib") and isinstance(getattr(value, "nbytes", None), int):
        return value.nbytes
    if module == "torch" and hasattr(value, "element_size"):
        return value.numel() * value.element_size()
    return 0


def _exactly(fd: int, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = os.read(fd, min(left, 1 << 22))
        if not chunk:
            raise EOFError("the worker's channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# ---- the worker's answers: encoded in the worker, decoded by the judge ---------------------


def pack(tree, buffers: list[bytes]) -> bytes:
    header = json.dumps(tree, allow_nan=False).encode()
    sizes = [len(b) for b in buffers]
    meta = json.dumps(sizes).encode()
    return struct.pack("<II", len(header), len(meta)) + header + meta + b"".join(buffers)


def unpack(payload: bytes) -> tuple[object, list[memoryview]]:
    try:
        hlen, mlen = struct.unpack_from("<II", payload)
        if hlen > TREE_BYTES or mlen > TREE_BYTES:
            raise WireError(f"a tree of {hlen} bytes and sizes of {mlen}: at most {TREE_BYTES} each")
        header = payload[8 : 8 + hlen]
        sizes = json.loads(payload[8 + hlen : 8 + hlen + mlen])
        if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
            raise WireError("buffer sizes are not a list of counts")
        start, views, data = 8 + hlen + mlen, [], memoryview(payload)
        for size in sizes:
            views.append(data[start : start + size])
            start += size
        if start != len(payload):
            raise WireError("buffers do not fill the message")
        return json.loads(header), views
    except (struct.error, ValueError, UnicodeDecodeError, RecursionError) as error:
        raise WireError(f"not a message of this format: {type(error).__name__}: {str(error)[:200]}") from None


class Decoder:
    """Rebuilds a worker's tree in the judge. ``args``: the judge's own arguments of the call, so a
    result that is a view of one of them is rebuilt as that view; ``limit``: the bytes all arrays,
    tensors and views rebuilt from the tree may span together (``answer_limit``)."""

    def __init__(self, buffers: list[memoryview], args: list | None = None, callbacks=None, limit: int = ANSWER_FLOOR):
        self.buffers, self.args = buffers, args or []
        self.callbacks = callbacks
        self.left, self.limit, self.nodes = limit, limit, 0

    def __call__(self, node, depth: int = 0):
        """``node`` rebuilt; whatever the tree makes rebuilding raise is a WireError (the worker's data,
        never the judge's fault: an unhashable key, a wrong arity, a number out of range)."""
        if depth:
            return self._node(node, depth)
        try:
            return self._node(node, depth)
        except WireError:
            raise
        except Exception as error:  # noqa: BLE001 - any tree the judge cannot rebuild
            raise WireError(f"a tree the judge cannot rebuild: {type(error).__name__}: {str(error)[:200]}") from None

    def _node(self, node, depth: int):
        if depth > DEPTH:
            raise WireError("nested too deeply")
        self.nodes += 1
        if self.nodes > NODES:
            raise WireError(f"a tree of more than {NODES} nodes")
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            raise WireError(f"not a tagged node: {str(node)[:80]}")
        tag, rest = node[0], node[1:]
        handler = getattr(self, f"_{tag}", None) if tag in TAGS else None
        if handler is None:
            raise WireError(f"unknown tag {tag[:40]!r}")
        return handler(depth + 1, *rest)

    def _spend(self, shape, itemsize: int, what: str) -> None:
        """Count an array of ``shape`` against the limit, before anything of it is allocated; an empty
        one as if its zero lengths were 1 (NumPy cannot make [0, 2^40, 2^40] either)."""
        size, claimed = _count(shape) * itemsize, _count(d or 1 for d in shape) * itemsize
        if claimed > self.left:
            raise WireError(
                f"{what} of shape {list(shape)[:8]} spans {claimed} bytes; this answer may span {self.limit} in all"
            )
        self.left -= size

    def _buffer(self, index) -> memoryview:
        if not isinstance(index, int) or not 0 <= index < len(self.buffers):
            raise WireError(f"no buffer {index!r}")
        return self.buffers[index]

    def _none(self, depth):
        return None

    def _bool(self, depth, value):
        return bool(value)

    def _int(self, depth, text):
        if not isinstance(text, str) or len(text) > 400:
            raise WireError("an integer must be its digits, at most 400 of them")
        return int(text)

    def _float(self, depth, text):
        if not isinstance(text, str) or len(text) > 40:
            raise WireError("a float must be its repr")
        return float(text)

    def _str(self, depth, text):
        if not isinstance(text, str):
            raise WireError("not a string")
        return text

    def _bytes(self, depth, index):
        return bytes(self._buffer(index))

    def _tuple(self, depth, items):
        return tuple(self(i, depth) for i in _listed(items))

    def _list(self, depth, items):
        return [self(i, depth) for i in _listed(items)]

    def _dict(self, depth, items):
        out = {}
        for pair in _listed(items):
            key, value = _listed(pair)
            out[self(key, depth)] = self(value, depth)
        return out

    def _opaque(self, depth, kind, text):
        return Opaque(str(kind)[:200], str(text)[:400])

    def _numpy_dtype(self, name):
        import numpy as np

        if name in JAX_EXTRA_DTYPES:
            import ml_dtypes  # noqa: F401 - registers the names with NumPy

        try:
            dtype = np.dtype(name) if isinstance(name, str) and len(name) < 40 else None
        except TypeError:
            dtype = None
        if (
            dtype is None
            or dtype.hasobject
            or dtype.fields
            or (dtype.kind not in NUMPY_KINDS and name not in JAX_EXTRA_DTYPES)
        ):
            raise WireError(f"dtype {str(name)[:40]!r} is not an array dtype")
        return dtype

    def _ndarray(self, depth, dtype, shape, index):
        import numpy as np

        dtype, shape = self._numpy_dtype(dtype), _shape(shape)
        self._spend(shape, dtype.itemsize, "an array")
        data = self._buffer(index)
        if len(data) != dtype.itemsize * _count(shape):
            raise WireError("an array's bytes do not match its shape")
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()

    def _npscalar(self, depth, dtype, index):
        import numpy as np

        dtype = self._numpy_dtype(dtype)
        data = self._buffer(index)
        if len(data) != dtype.itemsize:
            raise WireError("a scalar's bytes do not match its dtype")
        return np.frombuffer(data, dtype=dtype)[0]

    def _tensor(self, depth, dtype, shape, device, index, requires_grad):
        import torch

        if dtype not in TORCH_DTYPES:
            raise WireError(f"torch dtype {str(dtype)[:40]!r} is not on the list")
        shape, kind = _shape(shape), getattr(torch, dtype)
        self._spend(shape, kind.itemsize, "a tensor")
        data = bytearray(self._buffer(index))
        if len(data) != kind.itemsize * _count(shape):
            raise WireError("a tensor's bytes do not match its shape")
        flat = torch.frombuffer(data, dtype=kind) if data else torch.empty(0, dtype=kind)
        tensor = flat.reshape(shape).clone().to(_torch_device(device))
        return tensor.requires_grad_(bool(requires_grad)) if tensor.is_floating_point() else tensor

    def _jax(self, depth, dtype, shape, index, platform):
        import jax

        array = self._ndarray(depth, dtype, shape, index)
        devices = [d for d in jax.devices() if d.platform == platform] if platform != "cpu" else jax.devices("cpu")
        return jax.device_put(array, devices[0] if devices else jax.devices("cpu")[0])

    def _view(self, depth, path, shape, strides, offset):
        """A result that is a view of the judge's argument at ``path``: the same view of it here."""
        base = self._argument(path)
        shape, strides = _shape(shape), _shape(strides)
        if not isinstance(offset, int) or offset < 0 or len(strides) != len(shape):
            raise WireError("a view's offset and strides do not fit its shape")
        itemsize = getattr(base, "itemsize", None)
        if not isinstance(itemsize, int):
            raise WireError("a view of an argument that is not an array")
        self._spend(shape, itemsize, "a view of an argument")
        if type(base).__module__.startswith("torch"):
            import torch

            return torch.as_strided(base, shape, strides, offset)  # torch checks the storage's bounds
        import numpy as np

        if not isinstance(base, np.ndarray) or not base.flags.c_contiguous:
            raise WireError("a view of an argument that is not a contiguous array")
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides)) if _count(shape) else offset
        if last >= max(base.size, 1) and _count(shape):
            raise WireError("a view reaches past its argument")
        flat = base.reshape(-1)[offset:]
        return np.lib.stride_tricks.as_strided(flat, shape, [s * base.itemsize for s in strides], writeable=False)

    def _argument(self, path):
        value = self.args
        for step in _listed(path):
            if isinstance(value, dict) and isinstance(step, str) and step in value:
                value = value[step]
            elif isinstance(value, (list, tuple)) and isinstance(step, int) and 0 <= step < len(value):
                value = value[step]
            else:
                raise WireError(f"no argument at {path!r}")
        return value

    def _callable(self, depth, name):
        if self.callbacks is None:
            raise WireError("a function where none may come back")
        return self.callbacks.surface(str(name))

    def _package(self, depth, name, files):
        """A Mojo package the worker read (stackcheck.impl.mojo_source): its files, never its path."""
        from stackcheck.impl import mojo_source

        try:
            listed = [(rel, self._buffer(index)) for rel, index in (_listed(pair) for pair in _listed(files))]
            return mojo_source.shipped(name, listed, self.callbacks)
        except ValueError as error:
            raise WireError(f"a package: {error}") from None

    def _exception(self, depth, bases, message, frames, notes):
        if not isinstance(message, str) or not isinstance(notes, str):
            raise WireError("an exception's message is not text")
        return rebuilt_exception([str(b) for b in _listed(bases)][:64], message[:TEXT_CHARS], _frames(frames), notes)


def _listed(value) -> list:
    if not isinstance(value, list):
        raise WireError("a list was expected")
    return value


def parts(value, count: int | None = None) -> list:
    """``value``, a list of the worker's tree (of ``count`` items where given), else a WireError."""
    if not isinstance(value, list) or (count is not None and len(value) != count):
        raise WireError(f"a list{f' of {count}' if count is not None else ''} was expected: {str(value)[:80]}")
    return value


def _shape(value) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > 32 or not all(isinstance(d, int) and d >= 0 for d in value):
        raise WireError(f"not a shape: {str(value)[:80]}")
    return tuple(value)


def _count(shape) -> int:
    total = 1
    for d in shape:
        total *= d
    return total


def _torch_device(text):
    import torch

    if text == "cpu" or (isinstance(text, str) and text.startswith("cuda") and torch.cuda.is_available()):
        return torch.device(text)
    raise WireError(f"device {str(text)[:40]!r} is not this judge's")


def _frames(value) -> list[tuple[str, int, str]]:
    frames = []
    for frame in _listed(value)[-20:]:
        name, line, function = _listed(frame)
        if not isinstance(line, int):
            raise WireError("a frame's line is not a number")
        frames.append((str(name)[:200], line, str(function)[:200]))
    return frames


def rebuilt_exception(bases: list[str], message: str, frames: list, notes: str) -> BaseException:
    """The worker's exception as the nearest builtin exception class it derives from (a ValueError
    subclass stays a ValueError for ``pytest.raises``), its message and where in the student's file
    it was raised (``student_frames``: (file name, line, function), innermost last)."""
    kind = Exception
    for name in bases:
        found = getattr(builtins, name, None)
        if isinstance(found, type) and issubclass(found, Exception) and found is not Exception:
            kind = found
            break
    try:
        error = kind(message)
    except Exception:  # noqa: BLE001 - a builtin whose constructor wants more (UnicodeError, ...)
        error = RuntimeError(message)
    if kind is Exception:
        error = RemoteError(f"{bases[0] if bases else 'Exception'}: {message}")
    error.student_frames = frames
    if notes:
        error.add_note(notes[-4000:])
    return error
