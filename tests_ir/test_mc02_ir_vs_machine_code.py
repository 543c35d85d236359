"""MC02: IR is not machine code. StableHLO, FX and MAX IR hold tensor ops and no instructions; the
lowest text level (Triton's and Mojo's PTX) holds loads, stores and predicates, but still on
virtual registers: PTX is a virtual ISA that ptxas lowers to the GPU's machine code (SASS)."""

import re

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir, mojo_build, pointwise

INSTRUCTIONS = ("ld.global", "st.global", "setp")


def assert_virtual_isa(ptx: str, where: str) -> None:
    """Instructions, but on declared virtual registers, for a virtual target: not yet machine code."""
    for instruction in INSTRUCTIONS:
        assert instruction in ptx, f"{where} must contain {instruction}"
    assert ir.VIRTUAL_REGISTERS.search(ptx) and re.search(r"^\.target sm_\d+", ptx, re.M), (
        f"{where} declares virtual register files and a .target for ptxas: {ptx[:300]}"
    )


@pytest.mark.claim("MC02")
@pytest.mark.parametrize("device", device_params("jax"))
def test_stablehlo_is_tensor_ops(impl, jax_inputs, example_inputs):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    ops = re.findall(r"=\s*(?:\"?)(stablehlo\.\w+)[^\n]*?:\s*([^\n]*)$", stages["stablehlo"], re.M)
    families = pointwise.families(stages["stablehlo"], "stablehlo")  # the ReLU judged by what it computes
    assert {"matmul", "add", "relu"} <= set(families), (families, ops)
    scalar = [(op, types) for op, types in ops if "tensor<" not in types]
    assert not scalar, f"every StableHLO op takes and gives whole tensors (no scalars, pointers, loops): {scalar}"
    assert re.search(r"tensor<64x16xf32>", stages["stablehlo"]), "Y is one [64, 16] tensor value"
    assert_matches_reference(
        np.asarray(stages["compiled"](*jax_inputs)), reference_forward(*example_inputs), dtype="float32", k=32
    )


@pytest.mark.claim("MC02")
@pytest.mark.parametrize("device", device_params("torch"))
def test_fx_graph_is_tensor_ops(impl, torch_inputs, example_inputs):
    graphs, y = ir.dynamo_graphs(impl.torch_forward, *torch_inputs)
    judges.assert_ir_not_machine_code(str(graphs[0].graph), "the FX graph")
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("MC02")
@pytest.mark.max_graph("structure")
@pytest.mark.max
def test_max_graph_is_tensor_ops(impl, example_inputs):
    graph, _, _ = max_graphs.model("structure", impl)
    judges.assert_ir_not_machine_code(str(graph), "the MAX graph")
    out = max_graphs.execute("structure", impl, *example_inputs)
    assert_matches_reference(out["y"], reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("MC02")
@pytest.mark.mojo
def test_mojo_ptx_is_a_virtual_isa():
    """Built for an H100/H200 (nvidia:90) here, with or without a GPU."""
    ptx = mojo_build.kernel_ptx(mojo_build.source("bias_relu_gpu.mojo"), "bias_relu", {"N": 33, "M": 65})
    assert_virtual_isa(ptx, "the Mojo kernel's PTX")
    assert "max.f32" in ptx, "ReLU became one max.f32 instruction per element"


@pytest.mark.claim("MC02")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_triton_ptx_is_a_virtual_isa(impl, device):
    torch = need("torch")
    from stackcheck.toolchains import triton_kernels

    a_np, b_np = make_inputs(33, 65, 1)[0], make_inputs(1, 1, 65)[2]  # A[33, 65], b[65]
    a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
    y = impl.triton_bias_relu(a, b)
    compiled = triton_kernels.compiled_kernel.warmup(a, b, y, a.numel(), M=65, BLOCK_SIZE=256, grid=(1,))
    assert_virtual_isa(compiled.asm["ptx"], "Triton's PTX")
    assert_matches_reference(
        y, np.maximum(a_np.astype(np.float64) + b_np, 0), dtype="float32", k=1, what="Triton's ReLU(A + b)"
    )
