"""§5.2, a fusion that grows: two layers fused into one Triton program, Y = ReLU(X @ W1 + b1) @ W2.
The hidden activation never reaches memory: each program holds its BLOCK_N x H tile of it in
registers between the two dots, so the program's state grows with the hidden width H, and past
what the register file holds ptxas spills it to local memory. The unfused pair (two library
matmuls, the hidden activation written and read back) is the same computation."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.triton_kernels import EitherDevice, jit_both

K = M = 32  # the input and output widths: small, so H alone decides what a program holds
BLOCK_N = 64  # rows of X a program takes
WARPS = 4


def _fused_mlp_kernel(
    x_ptr, w1_ptr, b1_ptr, w2_ptr, y_ptr, N, K: tl.constexpr, H: tl.constexpr, M: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks, hs, ms = tl.arange(0, K), tl.arange(0, H), tl.arange(0, M)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < N, other=0.0)
    hidden = tl.dot(x, tl.load(w1_ptr + ks[:, None] * H + hs[None, :]), input_precision="ieee")
    hidden = tl.maximum(hidden + tl.load(b1_ptr + hs)[None, :], 0.0)  # stays in registers
    y = tl.dot(hidden, tl.load(w2_ptr + hs[:, None] * M + ms[None, :]), input_precision="ieee")
    tl.store(y_ptr + rows[:, None] * M + ms[None, :], y, mask=rows[:, None] < N)


compiled, interpreted = jit_both(_fused_mlp_kernel)
SIGNATURE = {"x_ptr": "*fp32", "w1_ptr": "*fp32", "b1_ptr": "*fp32", "w2_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}


def compiled_sm90(h: int):
    """The fused pair at hidden width ``h``, compiled for sm_90 on any machine (never launched here)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    constexprs = {"K": K, "H": h, "M": M, "BLOCK_N": BLOCK_N}
    source = ASTSource(
        fn=compiled, signature={**SIGNATURE, **dict.fromkeys(constexprs, "constexpr")}, constexprs=constexprs
    )
    return triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": WARPS})


def weights(h: int, device: str, seed: int):
    """W1 [K, H], b1 [H], W2 [H, M], float32, seeded (stackcheck.evidence.numerics.uniform), scaled so
    Y stays of order one."""
    from stackcheck.evidence.numerics import uniform

    w1, b1, w2 = (uniform(shape, seed=seed + i) for i, shape in enumerate(((K, h), (h,), (h, M))))
    return tuple(torch.from_numpy(a).to(device) for a in (w1 / K**0.5, b1, w2 / h**0.5))


def fused(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """Y by the one fused program (Triton's interpreter for CPU tensors)."""
    n, h = x.shape[0], w1.shape[1]
    y = torch.empty(n, M, device=x.device, dtype=torch.float32)
    kernel = EitherDevice(compiled, interpreted)[(triton.cdiv(n, BLOCK_N),)]
    kernel(x, w1, b1, w2, y, n, K=K, H=h, M=M, BLOCK_N=BLOCK_N, num_warps=WARPS)
    return y


def unfused(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """Y by separate kernels: the hidden activation goes through memory."""
    return torch.relu(x @ w1 + b1) @ w2
