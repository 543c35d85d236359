"""Reading what Inductor generated (course §5.2, §8.1): code, kernels, buffers.

Each call compiles afresh (Dynamo reset, FX graph cache off), so kernel counters are never
replayed from a cache of another test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackcheck.evidence import where

# Stable name prefixes: kernel suffixes (_0, _1, hashes) change between versions.
GENERATED = re.compile(r"^(\w+) = async_compile\.\w+\(", re.M)
EXTERN = re.compile(r"\bextern_kernels\.(\w+)\(")
ALLOC = re.compile(r"^\s*(buf\d+) = empty_strided_\w+\(\(([^)]*)\)", re.M)
REUSE = re.compile(r"^\s*(buf\d+) = (buf\d+); del \2\s+# reuse", re.M)


def elements(shape: str) -> int | None:
    """Elements of a buffer whose shape Inductor wrote as ``"1, 8, 16"``; None for a symbolic size."""
    dims = [d.strip() for d in shape.split(",") if d.strip()]
    if not all(d.isdigit() for d in dims):
        return None
    count = 1
    for d in dims:
        count *= int(d)
    return count


@dataclass
class Generated:
    code: str  # the wrapper module Inductor wrote (first compiled graph)
    programs: int  # compiled graphs (more than one means a graph break)
    kernels: list[str]  # generated kernel names: cpp_fused_*, triton_poi_fused_*, triton_tem_fused_*
    externs: list[str]  # library calls: addmm, mm, ...
    counted: int  # torch._inductor.metrics.generated_kernel_count
    allocations: list[tuple[str, str]]  # (buffer, shape) for every empty_strided in call()
    reuses: int
    result: object


def compile_and_read(fn, *args, **compile_kwargs) -> Generated:
    import torch
    from torch._inductor import config, metrics
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    metrics.reset()
    # No padding: on a GPU Inductor may pad a matmul's operands (a copy kernel chosen by timing), so
    # the kernels it writes would follow the clock, not the program.
    with config.patch(fx_graph_cache=False, shape_padding=False, comprehensive_padding=False):
        result, codes = run_and_get_code(torch.compile(fn, **compile_kwargs), *args)
    code = "\n".join(codes)
    return Generated(
        code=code,
        programs=len(codes),
        kernels=GENERATED.findall(code),
        externs=EXTERN.findall(code),
        counted=metrics.generated_kernel_count,
        allocations=ALLOC.findall(code),
        reuses=len(REUSE.findall(code)),
        result=result,
    )


RECORDING: list[list] = []  # the open eager_ops() lists: a call run in a forked child (impl.isolation) fills them too


def eager_ops(fn, *args, names: tuple[str, ...] = ()) -> tuple[object, list[dict]]:
    """(fn's result, every ATen op eager mode ran for it: its name and the shapes of its tensor
    inputs and outputs), recorded with a dispatch mode. Each op's ``written`` lists its outputs:
    shape, ``fresh`` (written to memory of its own, not a view of an input's) and ``sources``, the
    ``names`` of the arguments its values come from (a tensor made from none, ``torch.ones``, has
    none): what an op did with b, whatever the op is called."""
    far = where.elsewhere(eager_ops, fn, *args, names=names)
    if far is not where.HERE:
        return far
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    def tensors(tree):
        return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]

    ops = []
    sources = {id(t): (frozenset([name]), t) for name, t in zip(names, args)}  # the tensor kept alive with its id

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            ins, outs = tensors((args, kwargs)), tensors(out)
            came = frozenset().union(*(sources.get(id(t), (frozenset(), None))[0] for t in ins))
            storages = {t.untyped_storage().data_ptr() for t in ins}
            written = []
            for t in outs:
                sources[id(t)] = (came, t)
                fresh = t.untyped_storage().data_ptr() not in storages
                written.append({"shape": tuple(t.shape), "fresh": fresh, "sources": sorted(came)})
            shapes = [tuple(t.shape) for t in ins]
            ops.append(
                {
                    "op": func.overloadpacket.__name__,
                    "inputs": shapes,
                    "outputs": [w["shape"] for w in written],
                    "written": written,
                }
            )
            return out

    RECORDING.append(ops)
    try:
        with Record():
            result = fn(*args)
    finally:
        del RECORDING[next(i for i, open_one in enumerate(RECORDING) if open_one is ops)]  # by identity
    return result, ops


def eager_aten_ops(fn, *args):
    """(names of the ATen ops eager mode ran, each writing a new tensor; fn's result)."""
    result, ops = eager_ops(fn, *args)
    return [o["op"] for o in ops], result


VECTOR = re.compile(r"\bat::vec::Vectorized<")


def assert_vectorized(generated: Generated) -> None:
    """S5.1-target: Inductor's C++ kernel for a CPU uses the CPU's vector operations (ATen's
    Vectorized<T>, lowered to SIMD instructions), not one scalar at a time."""
    cpp = [k for k in generated.kernels if k.startswith("cpp_fused")]
    assert cpp and VECTOR.search(generated.code), (
        f"expected a cpp_fused kernel using at::vec::Vectorized; kernels {generated.kernels}"
    )
