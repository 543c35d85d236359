"""Course §11.2: bias + ReLU as a Triton kernel, after a torch matmul.

The same kernel source is decorated twice: once compiled for CUDA, once for Triton's
interpreter, which runs it on CPU torch tensors (the kernel object's kind is fixed when it
is decorated, by TRITON_INTERPRET). CPU inputs go to the interpreter, CUDA inputs to the
compiled kernel, so one process can test both.
"""
from __future__ import annotations

import contextlib
import os

import torch
import triton
import triton.language as tl

DTYPES = {"cuda": (torch.float32, torch.float16, torch.bfloat16),
          # NumPy, under the interpreter, has no bfloat16: Triton's interpreter returns NaN for it.
          "cpu": (torch.float32, torch.float16)}


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


def _mul_add_kernel(a_ptr, b_ptr, c_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """y = a * b + c, elementwise: what an FMA instruction computes (course §5.2)."""
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    c = tl.load(c_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, a * b + c, mask=mask)


mul_add_compiled, mul_add_interpreted = jit_both(_mul_add_kernel)


def ptx_sm90(kernel, signature: dict[str, str], constexprs: dict[str, int]) -> str:
    """The PTX Triton writes for an H100/H200 (sm_90), on any machine, GPU or not. FP fusion is
    asked for explicitly (Triton 3.10 turns its default off): FMA forms only where a*b+c is written."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    source = ASTSource(fn=kernel, signature={**signature, **{k: "constexpr" for k in constexprs}},
                       constexprs=constexprs)
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"enable_fp_fusion": True}).asm["ptx"]


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
    if a.device.type not in DTYPES:
        raise ValueError(f"device {a.device} is not supported: use CUDA (compiled) or CPU (Triton interpreter)")
    if a.dtype != b.dtype or a.dtype not in DTYPES[a.device.type]:
        names = ", ".join(str(d).removeprefix("torch.") for d in DTYPES[a.device.type])
        raise ValueError(f"A is {a.dtype} and b is {b.dtype}; on {a.device.type} both must be one of {names}")
    if not a.is_contiguous() or not b.is_contiguous():
        raise ValueError(f"A (strides {a.stride()}) and b (strides {b.stride()}) must be contiguous row-major: "
                         "the kernel indexes flat offsets")
    if a.requires_grad or b.requires_grad:
        raise ValueError("inputs require grad, but this kernel has no backward (inference only, course §11.2)")


def grid(n_elements: int, block_size: int) -> tuple[int]:
    """One program per BLOCK_SIZE elements: cdiv(n, BLOCK_SIZE) programs (course §11.3)."""
    return (triton.cdiv(n_elements, block_size),)


def launch(kernels, a: torch.Tensor, b: torch.Tensor, y: torch.Tensor, block_size: int) -> None:
    """Launch (compiled, interpreted)[device] over cdiv(n, block_size) programs."""
    compiled, interpreted = kernels
    n = a.numel()
    if a.device.type == "cuda":
        compiled[grid(n, block_size)](a, b, y, n, M=a.shape[1], BLOCK_SIZE=block_size)
    else:
        with interpreter(True):
            interpreted[grid(n, block_size)](a, b, y, n, M=a.shape[1], BLOCK_SIZE=block_size)


def bias_relu(a: torch.Tensor, b: torch.Tensor, block_size: int = 256, out: torch.Tensor | None = None,
              kernels=None) -> torch.Tensor:
    """Y = ReLU(A + b) by the Triton kernel, into ``out`` if given; an empty A returns at once, no launch."""
    validate(a, b)
    if block_size <= 0 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two, got {block_size}")
    if out is None:
        out = torch.empty_like(a)
    elif out.shape != a.shape or out.dtype != a.dtype or out.device != a.device or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous {a.dtype} tensor of shape {list(a.shape)} on {a.device}, got "
                         f"{out.dtype} {list(out.shape)} on {out.device} (contiguous: {out.is_contiguous()})")
    if a.numel() == 0:
        return out
    launch(kernels or (compiled_kernel, interpreted_kernel), a, b, out, block_size)
    return out
