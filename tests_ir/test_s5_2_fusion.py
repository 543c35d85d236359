"""§5.2/§5.4: fusion shows in generated code; the matmul is often a library call; counts are asserted."""

import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir, pointwise
from stackcheck.toolchains.inductor import compile_and_read

EPILOGUE = re.compile(r"Epilogue\(mo\.matmul\b.*\bmo\.add\b.*\bmo\.relu\b")
MATMULS = ("mm", "addmm", "bmm")  # the library GEMMs any spelling of X @ W lowers to (core ATen's matmuls)


@pytest.mark.claim("S5.2-fusion")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_inductor_fuses_bias_and_relu_after_a_library_matmul(impl, torch_inputs, example_inputs, evidence, device):
    gen = compile_and_read(impl.torch_forward, *torch_inputs)
    evidence(device=device, generated_kernels=gen.kernels, library_calls=gen.externs)
    assert gen.programs == 1, f"one compiled program expected, got {gen.programs} (a graph break?)"
    # judged by what runs, not by kernel names (a kernel is named after the ops as spelled: add_lt_where is a
    # ReLU too): the matmul is a library call and everything elementwise one generated kernel; the values
    # (checked below) show that kernel adds b and takes the ReLU
    assert [e for e in gen.externs if e in MATMULS] and set(gen.externs) <= set(MATMULS), gen.code
    kind = "cpp_fused" if device == "cpu" else "triton_poi_fused"
    assert len(gen.kernels) == 1 and gen.kernels[0].startswith(kind), gen.kernels
    assert gen.counted == 1, f"Inductor's generated-kernel counter must read 1, got {gen.counted}"
    assert_matches_reference(gen.result.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S5.2-fusion")
@pytest.mark.parametrize("device", device_params("torch_compile", devices=("cuda",)))
@pytest.mark.gpu_needs("gemm-templates")
def test_max_autotune_fuses_matmul_add_and_relu_in_one_template(impl, torch_inputs, example_inputs, evidence, device):
    need("torch")
    from torch._inductor import config

    # Triton GEMM templates only, and epilogues fused whenever legal, not when a benchmark happens
    # to favour them: otherwise autotuning may pick cuBLAS or an unfused template run to run.
    with config.patch(max_autotune_gemm_backends="TRITON", benchmark_epilogue_fusion=False):
        gen = compile_and_read(impl.torch_forward, *torch_inputs, mode="max-autotune-no-cudagraphs")
    evidence(device=device, generated_kernels=gen.kernels, library_calls=gen.externs)
    templates = [k for k in gen.kernels if re.match(r"triton_tem_fused\w*mm", k)]
    assert len(templates) == 1 and gen.kernels == templates, f"one template kernel, bias and ReLU in it: {gen.kernels}"
    assert not gen.externs, f"no library call left: {gen.externs}"
    assert_matches_reference(gen.result.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S5.2-fusion")
@pytest.mark.parametrize("device", device_params("jax"))
def test_xla_fuses_add_and_maximum(impl, jax_inputs, example_inputs, evidence, device):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    evidence(
        device=device,
        entry_fusions=re.findall(r"(%[\w.\-]+) = \S+ fusion\(", stages["hlo"]),
        custom_calls=sorted(set(re.findall(r'custom_call_target="([^"]+)"', stages["hlo"]))),
    )
    entry = stages["hlo"].split("ENTRY", 1)[1]
    fusions = ir.hlo_fusions(stages["hlo"])
    elementwise = pointwise.fusions_holding(stages["hlo"], {"add", "relu"})  # the ReLU judged by its values
    assert len(elementwise) == 1, f"exactly one fusion holds the add and the ReLU: {fusions}"
    assert entry.count("fusion(") == len(fusions) >= 1
    if device == "cuda":
        assert re.search(r"cublas|triton_gemm|__triton|gemm", stages["hlo"]), "on CUDA the dot is a GEMM call/fusion"
    assert_matches_reference(
        np.asarray(stages["compiled"](*jax_inputs)), reference_forward(*example_inputs), dtype="float32", k=32
    )


@pytest.mark.claim("S5.2-fusion")
@pytest.mark.max_graph("structure")
@pytest.mark.max
def test_max_puts_add_and_relu_in_the_matmul_epilogue(impl, example_inputs):
    _, compiled, _ = max_graphs.model("structure", impl)
    summaries = compiled.kernel_summaries
    epilogues = [s for s in summaries if EPILOGUE.search(s)]
    assert len(epilogues) == 1, f"one kernel: matmul with add and relu in its epilogue; summaries: {summaries}"
    standalone = [s for s in summaries if re.search(r"\bmo\.relu\b", s) and not EPILOGUE.search(s)]
    assert not standalone, f"no separate relu kernel may remain: {standalone}"
    out = max_graphs.execute("structure", impl, *example_inputs)
    assert_matches_reference(out["y"], reference_forward(*example_inputs), dtype="float32", k=32)
