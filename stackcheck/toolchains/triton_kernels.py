"""Course §11.2: bias + ReLU as a Triton kernel, after a torch matmul.

The same kernel source is decorated twice: once compiled for CUDA, once for Triton's
interpreter, which runs it on CPU torch tensors (the kernel object's kind is fixed when it
is decorated, by TRITON_INTERPRET). CPU inputs go to the interpreter, CUDA inputs to the
compiled kernel, so one process can test both.
"""

from __future__ import annotations

import contextlib
import functools
import os
import types

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.tiles import FUSED_TILE as FUSED_TILE  # re-exported: tests take it with the kernels
from stackcheck.toolchains.tiles import TILES, Tile, TileLaunch, launched

TRITON_TYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

KERNEL_DTYPES = {
    "cuda": (torch.float32, torch.float16, torch.bfloat16),
    # NumPy, under the interpreter, has no bfloat16: Triton's interpreter returns NaN for it.
    "cpu": (torch.float32, torch.float16),
}


def _bias_relu_kernel(a_ptr, b_ptr, y_ptr, n_elements, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # BLOCK_SIZE elements per program
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets % M, mask=mask, other=0.0)  # column index: b is broadcast over rows
    y = tl.maximum(a + b, 0.0)
    tl.store(y_ptr + offsets, y, mask=mask)


@contextlib.contextmanager
def interpreter(enabled: bool = True):
    saved = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1" if enabled else "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = saved


def jit_both(fn):
    """(compiled, interpreted) Triton kernels of one Python kernel function."""
    with interpreter(False):
        compiled = triton.jit(fn)
    with interpreter(True):
        interpreted = triton.jit(fn)
    return compiled, interpreted


compiled_kernel, interpreted_kernel = jit_both(_bias_relu_kernel)


def interpreted_twin(fn, made: dict | None = None):
    """``fn`` decorated for Triton's interpreter, reading its globals from a copy of its module's in
    which every ``@triton.jit`` function it may call (a helper, as Triton's tutorials write them, and
    theirs in turn) is an interpreted twin too: the module's own functions stay compiled for the GPU,
    and a helper called from an interpreted kernel runs there as the kernel does."""
    from triton.runtime.jit import JITFunction

    made = {} if made is None else made
    if fn in made:
        return made[fn]
    scope = dict(fn.__globals__)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__qualname__, copy.__module__ = fn.__kwdefaults__, fn.__qualname__, fn.__module__
    copy.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    with interpreter(True):
        made[fn] = twin = triton.jit(copy)
    for name, value in scope.items():
        if isinstance(value, EitherDevice):
            scope[name] = value.interpreted
        elif isinstance(value, JITFunction):
            scope[name] = interpreted_twin(value.fn, made)
    return twin


class EitherDevice:
    """A kernel launched by its tensors' device: compiled for CUDA tensors, and for CPU ones by
    Triton's interpreter (the same source, decorated again unless given), so it runs on a machine
    with no GPU. The suite launches its kernels so, and ``impl.loader`` wraps each kernel of an
    ``--impl`` module decorated once with ``@triton.jit``, as Triton's tutorials write it."""

    def __init__(self, compiled, interpreted=None):
        self.compiled = compiled
        self.interpreted = interpreted if interpreted is not None else interpreted_twin(compiled.fn)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            if any(isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in (*args, *kwargs.values())):
                with interpreter(True):
                    return self.interpreted[grid](*args, **kwargs)
            return self.compiled[grid](*args, **kwargs)

        return launch

    def __getattr__(self, name):
        return getattr(self.compiled, name)


def _loop_bound_kernel(y_ptr, n):
    for i in range(0, n, 1):  # a loop over a runtime bound, as the tiled matmul's K loop
        tl.store(y_ptr + i, i)


with interpreter(True):
    _interpreted_loop = triton.jit(_loop_bound_kernel)

UPSTREAM_INT_DEFECT = "https://github.com/triton-lang/triton/issues/9171"


@functools.cache
def interpreter_problem() -> str | None:
    """Why Triton's CPU interpreter cannot run the suite's kernels here (None when it can), probed
    with one tiny loop: some Triton releases (3.6 among them) turn a runtime loop bound into an int
    with int() of a one-element array, which NumPy 2.4 made an error."""
    import numpy as np

    y = torch.zeros(2, dtype=torch.int32)
    try:
        _interpreted_loop[(1,)](y, 2)
    except triton.runtime.errors.InterpreterError as error:
        if "0-dimensional arrays" not in str(error):
            raise
        return (
            f"Triton {triton.__version__}'s CPU interpreter cannot run with NumPy {np.__version__}: it calls int() "
            f"on a one-element array, an error since NumPy 2.4 ({UPSTREAM_INT_DEFECT}); "
            "pip install 'numpy<2.4', or a Triton release that has the fix (3.9 runs)"
        )
    return None


RECORDING: list[list] = []  # the open recorded_launches() lists; every launch is appended to each
OBSERVERS: list = []  # the open observed() callbacks: each is told of every launch before it runs
DESCRIBE: list = []  # recorded_launches(describe=...) open: the innermost describes each launch as its program
_UNPATCHED: dict = {}  # the launch methods _patched() replaced, while any recording or observer is open
_OPEN = [0]


def _grid_of(grid, kwargs) -> tuple:
    return tuple(grid(kwargs) if callable(grid) else grid)


class Launch(tuple):
    """One launch as recorded: its grid (a tuple, compared as one), and the launched kernel's
    function name in ``kernel`` (what a profiler's trace names the GPU kernel)."""

    kernel = ""
    program = None  # a student's kernel function's launch: (its checked module, the launch), kernel_source


def _spying(original):
    def run(self, *args, **kwargs):
        if not kwargs.get("warmup"):
            for observer in list(OBSERVERS):
                observer(self, args, kwargs)
            launch = Launch(_grid_of(kwargs["grid"], kwargs))
            launch.kernel = self.fn.__name__
            if RECORDING and DESCRIBE:  # a test reads its launches: each as its kernel's program, to build again
                launch.program = DESCRIBE[-1](self, args, kwargs)
            for recording in RECORDING:
                recording.append(launch)
        return original(self, *args, **kwargs)

    return run


@contextlib.contextmanager
def _patched():
    """Triton's launch methods spied on while any recording or observer is open (patched once)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if not _OPEN[0]:
        for kind in (JITFunction, InterpretedFunction):
            _UNPATCHED[kind] = kind.run
            kind.run = _spying(kind.run)
    _OPEN[0] += 1
    try:
        yield
    finally:
        _OPEN[0] -= 1
        if not _OPEN[0]:
            for kind, original in _UNPATCHED.items():
                kind.run = original
            _UNPATCHED.clear()


@contextlib.contextmanager
def recorded_launches(describe=None):
    """The grid (a ``Launch``) of every Triton kernel launched inside (compiled or interpreted, the
    suite's or a student's own kernel), in order, as a list that grows while the block runs (course §11.3).
    Recordings nest: each launch goes once into every open recording. ``describe(kernel, args, kwargs)``,
    if given, is each launch's ``program`` (stackcheck.impl.kernel_source.described)."""
    grids: list = []
    with _patched():
        RECORDING.append(grids)
        DESCRIBE.extend([describe] if describe else [])
        try:
            yield grids
        finally:
            del RECORDING[next(i for i, open_one in enumerate(RECORDING) if open_one is grids)]  # by identity
            if describe:
                del DESCRIBE[next(i for i, d in enumerate(DESCRIBE) if d is describe)]


def record(grid: tuple, kernel: str, program=None) -> None:
    """A launch made elsewhere (a student's checked kernels, launched again by the judge's side) told to
    every open recording, as if made here, with its ``program``: (the checked module, the launch)."""
    launch = Launch(grid)
    launch.kernel, launch.program = kernel, program
    for recording in RECORDING:
        recording.append(launch)


@contextlib.contextmanager
def unrecorded():
    """A block whose launches no open recording or observer sees."""
    saved = RECORDING[:], OBSERVERS[:]
    RECORDING.clear()
    OBSERVERS.clear()
    try:
        yield
    finally:
        RECORDING[:], OBSERVERS[:] = saved[0] + RECORDING, saved[1] + OBSERVERS


@contextlib.contextmanager
def observed(callback):
    """``callback(kernel, args, kwargs)`` called before every Triton launch inside (raising stops it)."""
    with _patched():
        OBSERVERS.append(callback)
        try:
            yield
        finally:
            del OBSERVERS[next(i for i, open_one in enumerate(OBSERVERS) if open_one is callback)]


def _mul_add_kernel(a_ptr, b_ptr, c_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """y = a * b + c, elementwise: what an FMA instruction computes (course §5.2)."""
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    c = tl.load(c_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, a * b + c, mask=mask)


mul_add_compiled, mul_add_interpreted = jit_both(_mul_add_kernel)


def _count_kernel(count_ptr, ATOMIC: tl.constexpr):
    """Each program adds one to a single counter: read, add, write back, or one atomic add (§7.1)."""
    if ATOMIC:
        tl.atomic_add(count_ptr, 1)
    else:
        tl.store(count_ptr, tl.load(count_ptr) + 1)


count_compiled, _ = jit_both(_count_kernel)


def programs_counted(programs: int, atomic: bool, device: str = "cuda") -> int:
    """What ``programs`` Triton programs leave in one counter that each adds one to: all of them
    when the adds are atomic; fewer when programs that run at once read the same old value."""
    count = torch.zeros(1, dtype=torch.int32, device=device)
    count_compiled[(programs,)](count, ATOMIC=atomic)
    return int(count.item())


def ptx_sm90(kernel, signature: dict[str, str], constexprs: dict[str, int]) -> str:
    """The PTX Triton writes for an H100/H200 (sm_90), on any machine, GPU or not. FP fusion is
    asked for explicitly (Triton 3.10 turns its default off): FMA forms only where a*b+c is written."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    source = ASTSource(
        fn=kernel, signature={**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs
    )
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"enable_fp_fusion": True}).asm["ptx"]


FP32_ARGS = {"a_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32"}


def bias_relu_ptx_sm90(m: int = 65, block_size: int = 256) -> str:
    """The §11.2 bias + ReLU kernel's PTX for sm_90, on float32."""
    return ptx_sm90(compiled_kernel, FP32_ARGS, {"M": m, "BLOCK_SIZE": block_size})


def mul_add_ptx_sm90(block_size: int = 256) -> str:
    """The a * b + c kernel's PTX for sm_90, on float32 (where an FMA instruction belongs, §5.2)."""
    return ptx_sm90(mul_add_compiled, {**FP32_ARGS, "c_ptr": "*fp32"}, {"BLOCK_SIZE": block_size})


def validate(a: torch.Tensor, b: torch.Tensor) -> None:
    """ValueError saying what is wrong, for every input the kernel does not handle."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ValueError(f"A and b must be torch tensors, got {type(a).__name__} and {type(b).__name__}")
    if a.ndim != 2 or b.ndim != 1:
        raise ValueError(f"A must be 2-D [N, M] and b 1-D [M]; got A {list(a.shape)} and b {list(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b has shape {list(b.shape)} but A has shape {list(a.shape)}: b must be [M] = [{a.shape[1]}]")
    if a.device != b.device:
        raise ValueError(f"A is on {a.device} but b is on {b.device}: both must be on one device")
    if a.device.type not in KERNEL_DTYPES:
        raise ValueError(f"device {a.device} is not supported: use CUDA (compiled) or CPU (Triton interpreter)")
    if a.dtype != b.dtype or a.dtype not in KERNEL_DTYPES[a.device.type]:
        names = ", ".join(str(d).removeprefix("torch.") for d in KERNEL_DTYPES[a.device.type])
        raise ValueError(f"A is {a.dtype} and b is {b.dtype}; on {a.device.type} both must be one of {names}")
    if not a.is_contiguous() or not b.is_contiguous():
        raise ValueError(
            f"A (strides {a.stride()}) and b (strides {b.stride()}) must be contiguous row-major: "
            "the kernel indexes flat offsets"
        )
    if a.requires_grad or b.requires_grad:
        raise ValueError("inputs require grad, but this kernel has no backward (inference only, course §11.2)")


def grid(n_elements: int, block_size: int) -> tuple[int]:
    """One program per BLOCK_SIZE elements: cdiv(n, BLOCK_SIZE) programs (course §11.3)."""
    return (triton.cdiv(n_elements, block_size),)


def launch(kernels, a: torch.Tensor, b: torch.Tensor, y: torch.Tensor, block_size: int) -> None:
    """Launch (compiled, interpreted)[device] over cdiv(n, block_size) programs."""
    n = a.numel()
    EitherDevice(*kernels)[grid(n, block_size)](a, b, y, n, M=a.shape[1], BLOCK_SIZE=block_size)


def bias_relu(
    a: torch.Tensor, b: torch.Tensor, block_size: int = 256, out: torch.Tensor | None = None, kernels=None
) -> torch.Tensor:
    """Y = ReLU(A + b) by the Triton kernel, into ``out`` if given; an empty A returns at once, no launch."""
    validate(a, b)
    if block_size <= 0 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two, got {block_size}")
    if out is None:
        out = torch.empty_like(a)
    elif out.shape != a.shape or out.dtype != a.dtype or out.device != a.device or not out.is_contiguous():
        raise ValueError(
            f"out must be a contiguous {a.dtype} tensor of shape {list(a.shape)} on {a.device}, got "
            f"{out.dtype} {list(out.shape)} on {out.device} (contiguous: {out.is_contiguous()})"
        )
    if a.numel() == 0:
        return out
    launch(kernels or (compiled_kernel, interpreted_kernel), a, b, out, block_size)
    return out


def _matmul_bias_relu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    N,
    M,
    K,
    BLOCK_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Y = ReLU(X @ W + b), one BLOCK_N x BLOCK_M tile of Y per program, K in BLOCK_K steps (course
    §5.3). Bias and ReLU are the epilogue, applied to the accumulator in registers: A and Z never
    reach memory (checkpoint 3). Every load and the store are masked, so no size must be a multiple
    of its tile."""
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.full((BLOCK_N, BLOCK_M), 0.0, tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < N) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + ks[:, None] * M + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < M), other=0.0)
        acc = tl.dot(x, w, acc, input_precision=PRECISION)
    bias = tl.load(b_ptr + cols, mask=cols < M, other=0.0)
    y = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0)
    tl.store(
        y_ptr + rows[:, None] * M + cols[None, :],
        y.to(y_ptr.dtype.element_ty),
        mask=(rows[:, None] < N) & (cols[None, :] < M),
    )


matmul_compiled, matmul_interpreted = jit_both(_matmul_bias_relu_kernel)
TILE_SIGNATURE = {
    "x_ptr": "*{dtype}",
    "w_ptr": "*{dtype}",
    "b_ptr": "*{dtype}",
    "y_ptr": "*{dtype}",
    "N": "i32",
    "M": "i32",
    "K": "i32",
}


def tile_compiled_sm90(tile: Tile, dtype: str = "fp32", precision: str = "tf32", arch: int = 90):
    """The fused matmul compiled for an H100/H200 (sm_90), or the compute capability ``arch`` (75 for
    sm_75), on any machine: ``.asm["ptx"]`` and ``.metadata.shared`` (bytes of shared memory a
    program needs)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature = {k: v.format(dtype=dtype) for k, v in TILE_SIGNATURE.items()}
    constexprs = tile.constexprs(precision)
    source = ASTSource(
        fn=matmul_compiled, signature={**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs
    )
    return triton.compile(
        source, target=GPUTarget("cuda", arch, 32), options={"num_stages": tile.stages, "num_warps": tile.warps}
    )


def matmul_bias_relu(
    x: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor,
    tile: Tile = Tile(64, 64, 32),
    precision: str = "tf32",
    kernels=None,
) -> torch.Tensor:
    """Y = ReLU(X @ W + b) by the tiled Triton kernel (the interpreter on CPU), one launch:
    cdiv(N, tile.n) x cdiv(M, tile.m) programs. Triton's OutOfResources reaches the caller when the
    tile needs more shared memory than the device has."""
    (n, k), m = x.shape, w.shape[1]
    if w.shape[0] != k or b.shape != (m,) or not (x.is_contiguous() and w.is_contiguous()):
        raise ValueError(
            f"X [N, K], W [K, M], b [M], contiguous: got {list(x.shape)}, {list(w.shape)}, {list(b.shape)}"
        )
    y = torch.empty((n, m), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n, tile.n), triton.cdiv(m, tile.m))
    compiled, interpreted = kernels or (matmul_compiled, matmul_interpreted)
    if x.device.type == "cuda":
        launched(TileLaunch(tile, TRITON_TYPES.get(x.dtype, str(x.dtype)), precision))
        compiled[grid](x, w, b, y, n, m, k, **tile.constexprs(precision), num_stages=tile.stages, num_warps=tile.warps)
    else:
        with interpreter(True):
            interpreted[grid](x, w, b, y, n, m, k, **tile.constexprs("ieee"))
    return y


def assert_tilings_right(device: str, tiles=TILES, kernels=None, n: int = 100, k: int = 70, m: int = 45) -> None:
    """Each tiling's ReLU(X @ W + b) against the float64 reference, at sizes no tile divides (§5.3)."""
    import numpy as np

    from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs

    x, w, b = make_inputs(n, k, m, seed=53)
    want = np.maximum(x.astype(np.float64) @ w + b, 0)
    for sizes in tiles:
        tile = Tile(*sizes)
        y = matmul_bias_relu(*(torch.from_numpy(a).to(device) for a in (x, w, b)), tile, kernels=kernels)
        assert_matches_reference(
            as_numpy(y),
            want,
            dtype="tfloat32" if device == "cuda" else "float32",
            k=k,
            what=f"ReLU(X @ W + b) with {tile}",
            N=n,
            K=k,
            M=m,
        )


def ptxas_usage(compiled) -> dict[str, int]:
    """Registers per thread and spill bytes of a kernel compiled for sm_90, from the verbose report
    of the ptxas Triton itself uses (it runs on any machine): what the GPU's register file must hold."""
    import re
    import subprocess
    import tempfile

    from triton.backends.nvidia.compiler import get_ptxas

    ptx = compiled.asm["ptx"]
    arch = re.search(r"^\.target (sm_\w+)", ptx, re.M).group(1)
    with tempfile.TemporaryDirectory() as folder:
        source = f"{folder}/kernel.ptx"
        with open(source, "w") as f:
            f.write(ptx)
        done = subprocess.run(
            [get_ptxas(90).path, f"-arch={arch}", "-v", source, "-o", f"{folder}/kernel.cubin"],
            capture_output=True,
            text=True,
        )
    said = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"ptxas failed: {said[-500:]}")
    numbers = {
        key: int(m.group(1)) if (m := re.search(pattern, said)) else 0
        for key, pattern in (
            ("registers", r"Used (\d+) registers"),
            ("spill_stores", r"(\d+) bytes spill stores"),
            ("spill_loads", r"(\d+) bytes spill loads"),
        )
    }
    return numbers
