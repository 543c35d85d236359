"""MC03 and §2.3: math ops, graph nodes, kernels and instructions are four different counts."""

import re

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir, mojo_build
from stackcheck.toolchains.inductor import compile_and_read

FORMULA_OPS = ["matmul", "add", "relu"]  # Y = ReLU(X @ W + b): three operations on paper


@pytest.mark.claim("MC03")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_ops_nodes_kernels_and_instructions_differ(impl, torch_inputs, example_inputs, evidence, device):
    export = ir.torch_export_graph(impl.torch_forward, *torch_inputs)
    calls = [line for line in export.splitlines() if "call_function[" in line]
    families = ir.torch_math_ops(ir.core_aten(impl.torch_forward, *torch_inputs), *torch_inputs)  # addmm: 2
    gen = compile_and_read(impl.torch_forward, *torch_inputs)
    kernels = len(gen.externs) + len(gen.kernels)  # library calls plus generated kernels
    instructions = fused_kernel_instructions(device)
    counts = {
        "math ops": len(FORMULA_OPS),
        "ATen graph nodes": len(calls),
        "op families in them": families,
        "kernels": kernels,
        "PTX instructions of a bias+ReLU kernel": instructions or "no PTX toolchain here",
    }
    evidence(**counts)
    assert families == FORMULA_OPS, f"the graph's nodes hold the three math ops, once each: {counts}"
    assert kernels == 2, f"fusion: three ops became two kernels (a library matmul, one fused kernel): {counts}"
    if instructions is not None:  # the other three counts stand without it
        assert instructions > 10 * kernels, counts
    assert_matches_reference(gen.result.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("MC03")
@pytest.mark.jax
def test_the_learners_jax_forward_counts_four_different_numbers(impl, evidence):
    """The implementation's JAX forward compiled for the CPU: three math ops, its jaxpr's nodes, XLA's
    kernels and library calls, and the machine instructions of the kernels XLA generated."""
    jax = need("jax")
    arrays = make_inputs(64, 32, 16, seed=33)
    args = jax_in(arrays, "cpu", "float32")
    found = ir.jax_counts(impl.jax_forward, *args)
    counts = {
        "ops": len(FORMULA_OPS),
        "nodes": len(found["nodes"]),
        "kernels": len(found["kernels"]),
        "instructions": found["instructions_at_least"],
    }
    evidence(counts=judges.assert_four_counts_differ(counts), graph_nodes=found["nodes"], xla_kernels=found["kernels"])
    y = jax_out(jax.jit(impl.jax_forward)(*args), "float32")
    assert_matches_reference(y, reference_forward(*arrays), dtype="float32", k=32)


def instruction_count(ptx: str) -> int:
    """PTX instructions: indented lines that are not directives, labels or comments."""
    return len([line for line in ptx.splitlines() if re.match(r"^\s+(?:@%p\d+\s+)?[a-z][\w.:]*\s", line)])


def fused_kernel_instructions(device: str) -> int | None:
    """Our Triton bias+ReLU kernel's PTX on CUDA; elsewhere the Mojo one's, built for nvidia:90;
    None where neither toolchain is installed."""
    from stackcheck.stacks.available import stack_missing

    if device == "cuda" and not stack_missing("triton"):
        torch = need("torch")
        from stackcheck.toolchains import triton_kernels

        a, b = torch.zeros(64, 16, device=device), torch.zeros(16, device=device)
        kernel = triton_kernels.compiled_kernel.warmup(a, b, a, a.numel(), M=16, BLOCK_SIZE=256, grid=(1,))
        return instruction_count(kernel.asm["ptx"])
    if stack_missing("mojo"):
        return None
    return instruction_count(
        mojo_build.kernel_ptx(mojo_build.source("bias_relu_gpu.mojo"), "bias_relu", {"N": 64, "M": 16})
    )


@pytest.mark.claim("MC03")
@pytest.mark.parametrize("device", device_params("torch_compile", devices=("cuda", "tpu")))
def test_one_node_can_become_several_kernels(device):
    """Counted from what Inductor generated (kernel definitions), not its kernel counter: on a CPU
    the counter counts each loop nest of one C++ function (softmax: 4 for one function), so the
    CPU shows passes, not kernels; on a GPU a large sum is split into two reduction kernels."""
    torch = need("torch")
    x_np = uniform((1 << 24,), seed=3)
    fn, k, expected = (lambda t: t.sum()), x_np.size, x_np.astype(np.float64).sum()
    x = torch.from_numpy(x_np).to(device)
    nodes = len(re.findall(r"call_function\[", ir.torch_export_graph(lambda a, b, c: fn(a), x, x, x)))
    gen = compile_and_read(fn, x)
    assert nodes == 1 and len(gen.kernels) >= 2, f"one node, {len(gen.kernels)} generated kernels: {gen.kernels}"
    assert_matches_reference(
        gen.result, expected, dtype="float32", k=k, what="the compiled reduction", device=device, seed=3
    )
