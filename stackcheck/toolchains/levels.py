"""§7.2, the memory hierarchy measured: one Triton kernel reads a working set block by block, pass
after pass, and sums what it read. Sized to fit one SM's L1, a quarter of the L2, or far past the
L2, the same reads come from each level in turn; bytes read over device time is that level's
bandwidth. Each program reads a different block each pass (its index plus the pass times a stride,
modulo the set), so no load is the same as the last and none can be hoisted out of the loop."""

from __future__ import annotations

import torch
import triton.language as tl

from stackcheck.toolchains.triton_kernels import EitherDevice, jit_both

BLOCK = 1024  # float32 values a program reads a pass (4 KB)
PASSES = 1024  # the H200 reads 4.4 GB a kernel (1056 programs): launch latency is under 1 % of even L1's 0.2 ms
PROGRAMS_PER_SM = 8
SM_BYTES = 16 * 1024  # inside the L1 of every CUDA GPU so far (Kepler's is the least: 16 KB)
L2_SHARE = 4  # a quarter of the L2
PAST_L2 = 8  # the device-memory set: at least this many times the L2 (and 1 GiB)
STRIDES = {"L1": 1, "L2": 7919, "device memory": 1031}  # blocks between a program's passes


def _reread_kernel(x_ptr, out_ptr, n_blocks, passes, stride, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    program = tl.program_id(0)
    total = tl.full((BLOCK,), 0.0, tl.float32)
    for p in range(passes):
        block = (program + p * stride) % n_blocks
        total += tl.load(x_ptr + block * BLOCK + offsets)
    tl.store(out_ptr + program * BLOCK + offsets, total)


compiled, interpreted = jit_both(_reread_kernel)


def working_sets(l2_bytes: int, budget_bytes: int) -> dict[str, int]:
    """Bytes of each level's working set on a GPU with this L2 and this much memory for one test."""
    past = min(max(PAST_L2 * l2_bytes, 2**30), budget_bytes // 2)
    return {"L1": SM_BYTES, "L2": l2_bytes // L2_SHARE, "device memory": past}


def reread(x: torch.Tensor, out: torch.Tensor, level: str, passes: int = PASSES) -> torch.Tensor:
    """``out`` [programs, BLOCK]: each program's sum of the blocks of ``x`` it read (Triton's
    interpreter for CPU tensors)."""
    programs = out.shape[0]
    EitherDevice(compiled, interpreted)[(programs,)](x, out, x.numel() // BLOCK, passes, STRIDES[level], BLOCK=BLOCK)
    return out


def expected(x: torch.Tensor, programs: int, level: str, passes: int = PASSES) -> torch.Tensor:
    """What ``reread`` must give, in float64."""
    blocks = x.reshape(-1, BLOCK).double()
    first = torch.arange(programs, device=x.device)
    total = torch.zeros(programs, BLOCK, dtype=torch.float64, device=x.device)
    for p in range(passes):
        total += blocks[(first + p * STRIDES[level]) % blocks.shape[0]]
    return total


def bytes_read(programs: int, passes: int = PASSES) -> int:
    return programs * passes * BLOCK * 4
