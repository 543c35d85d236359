"""Compile counting as a helper (course §2.4, §4.4): how many programs a block of code compiled."""

from __future__ import annotations

import contextlib
import re
import uuid
from dataclasses import dataclass, field

from stackcheck.evidence import where


@dataclass
class Count:
    compiles: int = 0
    recompiles: list = field(default_factory=list)  # each recompile's guard failures (torch: Dynamo's reasons)

    @property
    def input_compiles(self) -> int:
        """Compiles less the recompiles no guard on the inputs caused (a global the function changed, a
        guard of the wrapper it was loaded through): what a specialization policy (§2.4, §12.4) is judged
        by, however the function was written or loaded."""
        return max(0, self.compiles - sum(1 for reasons in self.recompiles if not input_caused(reasons)))


# A guard on the inputs, as Dynamo words its failure: a tensor's static size, stride, dtype or device
# ("tensor 'x' size mismatch at index 0. expected 4, actual 9"), a symbolic size ("(x.size()[0] % 2) == 0"),
# or the global state a tensor computes under ("GLOBAL_STATE changed: grad_mode").
INPUT_GUARD = re.compile(r"\btensor '.*' \w+ mismatch|\.size\(\)|\.stride\(\)|\bsym_size\b|GLOBAL_STATE changed")


def guard_failed(reason: str) -> str:
    """The guard of one of Dynamo's recompile reasons, without the source line and stack it quotes:
    "0/0: G['_relu'] is None"."""
    return reason.split("\n")[0].split("#")[0].strip()


def input_caused(reasons: list[str]) -> bool:
    """Whether a recompile's guard failures include a guard on the inputs; a recompile Dynamo gave no reason for
    counts as one (the claim is not given the benefit of the doubt)."""
    return not reasons or any(INPUT_GUARD.search(guard_failed(r)) for r in reasons)


@contextlib.contextmanager
def recompile_reasons():
    """The guard failures of each recompile Dynamo makes inside the block, a list of strings per recompile
    (``torch._dynamo``'s recompile reasons, as its ``recompiles`` log prints them). Private API: where a
    torch release moves it, the block records nothing and every compile counts."""
    from unittest import mock

    from torch._dynamo import convert_frame

    found: list[list[str]] = []
    original = getattr(convert_frame, "get_and_maybe_log_recompilation_reasons", None)
    if original is None:
        yield found
        return

    def recording(*args, **kwargs):
        reasons = original(*args, **kwargs)
        found.append([guard_failed(r) for r in reasons])
        return reasons

    with mock.patch.object(convert_frame, "get_and_maybe_log_recompilation_reasons", recording):
        yield found


@contextlib.contextmanager
def jax_compiles():
    """Count XLA backend compilations (JAX's '/jax/core/compile/backend_compile_duration' events).

    The event's name lives in a private module: if a JAX release moves it, the test using this
    counter is skipped naming the version, rather than erroring."""
    import jax.monitoring
    import pytest

    try:
        from jax._src.dispatch import BACKEND_COMPILE_EVENT
    except ImportError as error:
        pytest.skip(f"JAX {jax.__version__} moved its compile event ({error}); update stackcheck.evidence.compiles")

    count = Count()

    def listener(event: str, duration: float, **kwargs) -> None:
        if event == BACKEND_COMPILE_EVENT:
            count.compiles += 1

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield count
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


@contextlib.contextmanager
def torch_compiles():
    """Count graphs Dynamo compiled (torch._dynamo's 'unique_graphs' counter) inside the block, and each
    recompile's guard failures."""
    from torch._dynamo.utils import counters

    count = Count()
    before = counters["stats"]["unique_graphs"]
    try:
        with recompile_reasons() as reasons:
            yield count
    finally:
        count.compiles, count.recompiles = counters["stats"]["unique_graphs"] - before, reasons


def counted_compile(fn, **options):
    """(``torch.compile(fn, **options)`` through Inductor, a counter of the graphs compiled for it
    alone): unlike Dynamo's global counter, a compile elsewhere in the process (another test's,
    another thread's) is not counted. The count holds each recompile's guard failures too."""
    import torch
    from torch._inductor.compile_fx import compile_fx

    graphs = [0]

    def inductor(gm, example_inputs):
        graphs[0] += 1
        return compile_fx(gm, example_inputs)

    @contextlib.contextmanager
    def counter():
        count, before = Count(), graphs[0]
        try:
            with recompile_reasons() as reasons:
                yield count
        finally:
            count.compiles, count.recompiles = graphs[0] - before, reasons

    return torch.compile(fn, backend=inductor, **options), counter


def fresh_compile(torch, fn):
    """``torch.compile(fn)`` anew, whose first call really traces and compiles: Dynamo forgets what it
    compiled before, and every cache of Inductor's is off while the first call compiles (fresh cache
    folders). Otherwise the FX graph and AOT autograd caches, warm from any earlier compile of the same
    graph in any process, load its code from disk and the first call skips most of the compile."""
    import warnings

    torch._dynamo.reset()
    compiled = torch.compile(fn)
    cold = [True]

    def call(*args):
        if not cold[0]:
            return compiled(*args)
        with torch._inductor.config.patch(force_disable_caches=True), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*force_disable_caches")
            out = compiled(*args)
        cold[0] = False
        return out

    return call


def fresh_jit(jax, fn):
    """A jitted ``fn`` that JAX has never seen: jit caches programs per Python function, and this
    wrapper is a new function each time, so its first call really traces and compiles. Its name is
    new too: JAX's persistent compilation cache (``JAX_COMPILATION_CACHE_DIR``, on in a graded run)
    keys a program by its name and its IR, and would otherwise load the same program from disk."""

    def fresh(*args):
        return fn(*args)

    fresh.__name__ = fresh.__qualname__ = f"fresh_{uuid.uuid4().hex[:12]}"
    return jax.jit(fresh)


# A matmul in the code Inductor wrote: a library GEMM it calls, or a template kernel it generated.
MATMUL_IN_CODE = re.compile(r"extern_kernels\.(mm|addmm|bmm)\b|_tem_fused|\baten\.mm\b")


def inductor_code(fn, *args) -> tuple:
    """(``fn(*args)``, the code Inductor wrote while it ran), with the FX graph cache off so that a
    compile writes its code anew. Unlike torch's run_and_get_code it leaves Dynamo's caches alone
    (a caller counting recompiles needs them): reset Dynamo first for a function compiled before."""
    from unittest import mock

    from torch._inductor import config
    from torch._inductor.graph import GraphLowering

    far = where.elsewhere(inductor_code, fn, *args)
    if far is not where.HERE:
        return far
    written: list[str] = []
    with config.patch(fx_graph_cache=False), mock.patch.object(GraphLowering, "save_output_code", written.append):
        return fn(*args), written


def assert_matmul_compiled(codes: list[str]) -> None:
    """§8.1: the compiled forward went through Inductor (it wrote code) and that code holds the
    matmul: X @ W is part of the compiled program, not run eagerly around a compiled tail."""
    assert codes and "async_compile" in codes[0], "the compiled forward went through Inductor: it wrote code"
    assert MATMUL_IN_CODE.search("\n".join(codes)), (
        "the whole forward is compiled, its matmul included (Inductor calls a library GEMM or writes a template "
        "kernel for it); the code holds no matmul, so X @ W ran outside the compiled program"
    )
