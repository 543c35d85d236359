"""Checkpoint 1 and §2.3: Z = A + b need not be stored. Compiled code materializes fewer buffers
than eager has intermediates."""

import math

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir
from stackcheck.toolchains.inductor import compile_and_read, eager_ops, elements


@pytest.mark.claim("Q1")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_inductor_allocates_one_buffer_where_eager_writes_each_step(impl, torch_inputs, example_inputs, evidence):
    """Eager writes each step's [N, M] result to memory of its own (A, Z, Y; two where one call
    adds b to the product, as addmm or linear do); the compiled forward allocates one [N, M] buffer:
    the intermediates were never stored."""
    _, ops = eager_ops(impl.torch_forward, *torch_inputs)
    n, m = torch_inputs[0].shape[0], torch_inputs[1].shape[1]
    eager = [o["op"] for o in ops for t in o["written"] if t["fresh"] and math.prod(t["shape"]) == n * m]
    gen = compile_and_read(impl.torch_forward, *torch_inputs)
    full = [(buf, shape) for buf, shape in gen.allocations if elements(shape) == n * m]  # [N, M], [1, N, M] alike
    evidence(**judges.assert_compiled_stores_fewer(eager, full))
    assert_matches_reference(gen.result.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("Q1")
@pytest.mark.parametrize("device", device_params("jax"))
def test_xla_needs_no_temporary_n_by_m_buffer(impl, jax_inputs, example_inputs, device):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    stats = stages["compiled"].memory_analysis()
    if stats is None:
        pytest.skip(f"memory_analysis() is not available for the {device} backend of this jaxlib")
    one_buffer = example_inputs[0].shape[0] * example_inputs[1].shape[1] * 4
    assert stats.temp_size_in_bytes < one_buffer, (
        f"temp bytes {stats.temp_size_in_bytes} >= one N x M buffer ({one_buffer}): Z was materialized"
    )
    assert stats.output_size_in_bytes == one_buffer
    assert_matches_reference(
        np.asarray(stages["compiled"](*jax_inputs)), reference_forward(*example_inputs), dtype="float32", k=32
    )


@pytest.mark.claim("Q1")
@pytest.mark.parametrize("device", device_params("torch_compile", devices=("cuda",)))
def test_peak_memory_eager_vs_compiled_on_cuda(impl, evidence, device):
    torch = need("torch")
    n, k, m = 8192, 256, 8192  # one [N, M] float32 buffer is 256 MiB: it dominates the peak
    inputs = make_inputs(n, k, m, seed=1)
    x, w, b = (torch.from_numpy(v).to(device) for v in inputs)
    compiled = torch.compile(impl.torch_forward)
    compiled(x, w, b)  # compile outside the measurement
    one = n * m * 4
    peaks = {}
    for name, fn in (("eager", impl.torch_forward), ("compiled", compiled)):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        y = fn(x, w, b)
        torch.cuda.synchronize()
        peaks[name] = (torch.cuda.max_memory_allocated() - base) / one
        del y
    evidence(peak_in_n_by_m_buffers=peaks)
    assert peaks["eager"] >= 1.9, f"eager holds two [N, M] tensors at once (Z while writing Y): {peaks}"
    assert peaks["compiled"] <= 1.1, f"compiled holds only Y: {peaks}"
    assert_matches_reference(
        compiled(x, w, b), reference_forward(*inputs), dtype="float32", k=k, seed=1, what="compiled Y"
    )
