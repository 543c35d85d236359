"""The course's verdicts on IRs and compiled code (§4-§5, §8-§9, §13): what a graph, a jaxpr, HLO,
PTX or a MAX graph shows, judged on what the toolchains (stackcheck.toolchains) read."""

from __future__ import annotations

import re

from stackcheck.toolchains import ir, pointwise


def assert_ops_in_order(text: str, wanted: list[str], where: str, form: str | None = None) -> None:
    """Fail, printing the IR, unless ``wanted`` appear in this order among its ops: for a JAX ``form``
    (jaxpr, stablehlo, hlo) its canonical ops, the ReLU judged by what it computes (toolchains.pointwise)."""
    __tracebackhide__ = True
    seq = pointwise.families(text, form) if form else ir.op_sequence(text)
    if not ir.is_subsequence(wanted, seq):
        raise AssertionError(
            f"{where}: expected the ops {' -> '.join(wanted)} in order, found {seq}\n--- IR ---\n{text[:4000]}"
        )


def assert_ir_not_machine_code(text: str, where: str) -> None:
    """MC02: an IR holds tensor ops and no machine instructions."""
    __tracebackhide__ = True
    if not ir.op_sequence(text):
        raise AssertionError(f"{where} must hold tensor ops; it holds none:\n{text[:2000]}")
    if ir.machine_instructions(text):
        raise AssertionError(f"{where} holds machine instructions: {ir.machine_instructions(text)}")


def assert_torch_math_ops(program, args, wanted: list[str], where: str) -> list[str]:
    """Fail, printing the core ATen graph, unless ``torch_math_ops`` of ``program`` are ``wanted``."""
    __tracebackhide__ = True

    found = ir.torch_math_ops(program, *args)
    graph = program.graph
    assert found == wanted, (
        f"{where}: expected the ops {' -> '.join(wanted)} in order, found {found} (once each, judged on core "
        f"ATen: matmuls mm/bmm/addmm, adds that broadcast b, ReLUs by their values)\n"
        f"--- core ATen ---\n{str(graph)[:4000]}"
    )
    return found


def assert_backends_name_the_matmul_differently(by_backend: dict[str, str]) -> dict[str, str]:
    """§9.3: the matmul's op in each backend's optimized HLO (``hlo_matmul_op``), by backend: every
    backend holds one, and not all under one name."""
    assert "none" not in by_backend.values(), f"each backend's HLO holds the matmul: {by_backend}"
    assert len(set(by_backend.values())) > 1, f"backends name the matmul their own way: {by_backend}"
    return by_backend


def assert_backends_optimize_differently(by_backend: dict[str, dict]) -> dict[str, dict]:
    """§12.5: one line, one JAX, two backends, two optimizations: by backend, the ENTRY instructions of
    its optimized HLO that run ("ops") and the [N, M] values it keeps in memory between them
    ("kept", ``ir.hlo_kept``); the backends differ in at least one (XLA:CPU keeps the dot's output
    and adds the epilogue in a loop fusion; XLA:GPU fuses the epilogue into the GEMM)."""
    shapes = {d: (len(found["ops"]), len(found["kept"])) for d, found in by_backend.items()}
    assert len(set(shapes.values())) > 1, (
        f"the backends optimized the line alike (ops run, values kept in memory): {by_backend}"
    )
    return by_backend


def assert_variants_fuse_alike(found: dict[str, dict]) -> dict[str, dict]:
    """§3.2: for each variant of the line (another activation, no bias, SwiGLU's two matmuls),
    ``found[variant]`` = {"matmuls": the matmuls it writes, "kernels": its compiled kernels' kinds,
    "elementwise_ops": the elementwise ops its StableHLO writes}. Each compiles as the course's
    ReLU(X @ W + b) does: a kernel per matmul at most (XLA:GPU makes SwiGLU's two products of X one
    GEMM), and at most one more for everything elementwise, however many ops the activation takes (the
    H200 fuses ReLU and bias into the GEMM itself)."""
    for name, each in found.items():
        matmuls, elementwise = each["kernels"].count("matmul"), each["kernels"].count("elementwise")
        assert 1 <= matmuls <= each["matmuls"] and elementwise <= 1, (
            f"{name}: a kernel per matmul at most ({each['matmuls']}) and one fused elementwise kernel at most; "
            f"compiled {each['kernels']}: {found}"
        )
        assert each["elementwise_ops"] > elementwise, f"{name}: its elementwise ops are not fused: {found}"
    return found


def assert_dead_matmul_removed(jaxpr: str, hlo: str) -> None:
    """S5.1-dce: the unused sin(X @ (W + 1)) is traced (two matmuls of different operands, so common-
    subexpression elimination cannot merge them, and a sin) and gone once compiled (one dot, no sine)."""
    dots = re.findall(r"= dot_general\[.*?\] (\w+ \w+)", jaxpr, re.S)
    traced = (len(dots), len(set(dots)), jaxpr.count(" sin "))
    compiled = (ir.hlo_opcodes(hlo).count("dot"), ir.hlo_opcodes(hlo).count("sine"))
    assert traced == (2, 2, 1) and compiled == (1, 0), (
        f"the unused matmul and its sin must be gone after compiling: traced {traced[0]} matmuls of "
        f"{traced[1]} different operand pairs and {traced[2]} sin; {compiled[0]} dot and {compiled[1]} sine "
        "in the optimized HLO"
    )


def assert_constant_folded(stablehlo: str, hlo: str) -> None:
    """S5.1-constfold: W * 2 of a constant W is a multiply as written, and gone once compiled."""
    written, left = "stablehlo.multiply" in stablehlo, ir.hlo_opcodes(hlo).count("multiply")
    assert written and left == 0, (
        f"W * 2 must be written in StableHLO ({written}) and computed ahead of time, not at run time ({left} left)"
    )


def assert_export_and_dynamo_levels(exported: list[str], dynamo: list[str], families: tuple[list, list]) -> None:
    """S8.3: the same three ops at two levels: torch.export's targets ATen overloads, Dynamo's not.
    ``families``: ``torch_math_ops`` of each graph's core ATen form (the ops, however spelled)."""
    assert families[0] == families[1] == ["matmul", "add", "relu"], (
        f"both graphs compute matmul -> add -> relu: export {families[0]}, Dynamo {families[1]}",
        exported,
        dynamo,
    )
    assert all(t.startswith("aten.") for t in exported), f"torch.export records ATen overloads: {exported}"
    assert not any(t.startswith("aten.") for t in dynamo), f"Dynamo records the Python-level calls: {dynamo}"


FMA = re.compile(r"^\s*(?:@%p\d+\s+)?fma\.rn\.f32\b", re.M)


def assert_no_fma_in_the_fused_kernel(ptx: str) -> None:
    """S5.2-fma, on a learner's bias + ReLU kernel: its PTX adds b (add.f32) and has no FMA; the ReLU
    may be a max or a select, however it is spelled."""
    assert re.search(r"^\s*(?:@%p\d+\s+)?add\.(?:rn\.)?f32\b", ptx, re.M), "the fused kernel's PTX adds b: no add.f32"
    found = FMA.findall(ptx)
    assert not found, f"graph fusion of the add and the ReLU is no FMA; the kernel's PTX holds {len(found)} fma.rn.f32"


def assert_fusion_is_not_fma(fused_ptx: str, mul_add_ptx: str) -> None:
    """S5.2-fma: the graph-fused add + ReLU kernel adds and takes a max, with no FMA; the FMA
    instruction appears where a * b + c is written."""
    assert re.search(r"^\s*(?:@%p\d+\s+)?add\.f32\b", fused_ptx, re.M) and "max.f32" in fused_ptx, (
        "the fused kernel's PTX adds b and takes the max (ReLU)"
    )
    assert not FMA.search(fused_ptx), "graph fusion of add and ReLU is not an FMA: no fma.rn.f32 in its PTX"
    assert FMA.search(mul_add_ptx), "a * b + c becomes one fma.rn.f32 instruction"


def assert_xla_stages_in_order(names: list[str]) -> dict[str, str]:
    """§5.1: each of XLA's stages shows in the pass dump, in the course's order; the first file of
    each stage."""
    first = {stage: next((i for i, n in enumerate(names) if p.search(n)), None) for stage, p in ir.XLA_STAGES.items()}
    found = {stage: names[i] if i is not None else "missing" for stage, i in first.items()}
    unnumbered = [n for n in names if not ir.PASS_NUMBER.search(n)]
    assert None not in first.values(), f"every stage of XLA shows in its pass dump: {found}; other files: {unnumbered}"
    order = list(first.values())
    assert order == sorted(order), f"XLA's stages come in the course's order: {found}"
    return found


def assert_llvm_not_llo(names: list[str]) -> None:
    """S9.7-llo: a CPU build's dump holds LLVM IR modules and no LLO stage."""
    llvm = [n for n in names if n.endswith(".ll")]
    llo = ir.llo_files(names)
    assert llvm and not llo, f"XLA's CPU backend lowers HLO to LLVM IR ({llvm}), with no LLO stage ({llo})"


def assert_same_model(by_init: dict, by_load: dict) -> None:
    """S10.3: compile() + init() and load() give one model: every output equal, bit for bit."""
    import numpy as np

    differing = {
        name: "missing" if name not in by_init else int(np.sum(by_init[name] != by_load[name]))
        for name in by_load
        if name not in by_init or not np.array_equal(by_init[name], by_load[name])
    }
    assert by_init.keys() == by_load.keys() and not differing, (
        f"compile() + init() must give the model load() gives: outputs differing {differing}"
    )


def assert_warpgroup_mma(ptx: str, sass: str) -> None:
    """S5.1-target: a bf16 tile for sm_90 uses Hopper's warpgroup MMA: ``wgmma`` in the PTX (bf16
    operands, fp32 accumulator) and ``HGMMA`` in the machine code ptxas made of it."""
    assert re.search(r"\bwgmma\.mma_async\.sync\.aligned\.\w+\.f32\.bf16\.bf16", ptx), (
        "the PTX multiplies bf16 operands into an fp32 accumulator by wgmma.mma_async"
    )
    assert re.search(r"\bHGMMA\.", sass), "the SASS runs the tile on the tensor cores: HGMMA instructions"


def assert_lowering_levels(asm: dict) -> dict:
    """S4.2: tensors and a structured loop at the top (ttir), a thread layout added (ttgir), addresses
    and branch loops with no tensors (llir), global loads/stores on virtual registers (ptx, a virtual
    ISA), an ELF object (cubin), and in it SASS: the machine's loads/stores on physical registers."""
    missing = [level for level in ir.LEVELS if level not in asm]
    assert not missing, f"Triton gave no {missing} stage; it gave {sorted(asm)}"
    f = ir.lowering_facts(asm)
    expected = {
        "ttir": {"tensors": True, "structured loop": True, "thread layout": False, "addresses": False},
        "ttgir": {"tensors": True, "thread layout": True, "addresses": False},
        "llir": {"tensors": False, "addresses": True, "branch loop": True},
        "ptx": {
            "tensors": False,
            "global load/store": True,
            "branch loop": True,
            "virtual registers": True,
            "machine load/store": False,
        },
        "cubin": {"machine code object": True},
        "sass": {"tensors": False, "virtual registers": False, "machine load/store": True},
    }
    wrong = {level: {k: f[level][k] for k, v in want.items() if f[level][k] != v} for level, want in expected.items()}
    wrong = {level: found for level, found in wrong.items() if found}
    assert not wrong, f"Triton's stages, from tensors down to machine code, do not lower as §4.2 says: {wrong}"
    return f


def assert_steps_recorded(graph) -> None:
    """§10.3's A = X @ W, Z = A + b, Y = ReLU(Z), read from the graph MAX recorded (before it compiles)."""
    steps = ir.max_recorded_steps(graph)
    expected = {"a": ("matmul", {"x", "w"}), "z": ("add", {"a", "b"}), "y": ("relu|max", {"z"})}
    wrong = {
        name: steps.get(name)
        for name, (op, operands) in expected.items()
        if name not in steps or not re.search(op, steps[name][0]) or not operands <= set(steps[name][1])
    }
    assert not wrong, f"max_steps must record A = X @ W, Z = A + b, Y = ReLU(Z); recorded {steps} (wrong: {wrong})"


def assert_relu_call_inlined(stablehlo: str, hlo: str) -> None:
    """§9.4: a call of @relu in StableHLO, none left in the optimized HLO, and the maximum in a fusion."""
    called = re.findall(r"\bcall @(\w*relu\w*)", stablehlo)
    left = [op for op in ir.hlo_opcodes(hlo) if op == "call"]
    fused = pointwise.fusions_holding(hlo, {"relu"})
    assert called and not left and fused, (
        f"StableHLO calls {called or 'no relu function'}; the optimized HLO has {len(left)} call(s) and "
        f"{'a' if fused else 'no'} fusion computing the ReLU"
    )


def assert_unrolled_and_looped(one: dict, unrolled: dict, looped: dict, steps: int) -> dict:
    """§4.1: primitives (``jaxpr_ops``) of one forward, of a Python loop of ``steps`` forwards, and of a
    fori_loop over it: the Python loop is unrolled into ``steps`` copies of the forward's matmuls, the
    fori_loop is one loop (a while, or the scan JAX makes of static bounds) holding one copy."""
    found = {
        "one": one.get("dot_general", 0),
        "unrolled": unrolled.get("dot_general", 0),
        "unrolled_whiles": unrolled.get("while", 0) + unrolled.get("scan", 0),
        "looped": looped.get("dot_general", 0),
        "whiles": looped.get("while", 0) + looped.get("scan", 0),  # fori_loop with static bounds is a scan
    }
    assert found["one"] >= 1 and found["unrolled"] == steps * found["one"] and not found["unrolled_whiles"], (
        f"a Python loop of {steps} forwards unrolls into {steps} copies of the forward's matmuls: {found}"
    )
    assert found["whiles"] == 1 and found["looped"] == found["one"], f"fori_loop keeps one loop, one copy: {found}"
    return found


def assert_names_vary_meaning_stays(one: dict, other: dict) -> dict:
    """§5.4/§9.3: two JAX versions' printouts of one program (``jax_versions.parts``). Both lower to
    the same op families (a matmul, an add, a maximum in StableHLO and in the compiled HLO), and the
    names they print differ: the jaxpr's primitives or the compiled HLO's instruction names."""
    for part, wanted in ir.FAMILIES.items():
        for run in (one, other):
            lacking = wanted - set(run[part])
            assert not lacking, f"JAX {run['version']}'s {part} lacks {sorted(lacking)}: {run[part]}"
    found = {
        part: {f"only_{one['version']}": sorted(set(one[part]) - set(other[part])),
               f"only_{other['version']}": sorted(set(other[part]) - set(one[part]))}
        for part in ("jaxpr", "hlo_names")
    }  # fmt: skip
    assert any(any(d.values()) for d in found.values()), (
        f"JAX {one['version']} and {other['version']} print the same primitive and instruction names: {found}"
    )
    return found


def assert_compiled_stores_fewer(eager: list[str], compiled: list) -> dict:
    """Checkpoint 1 (§2.3): eager writes each step's [N, M] result to fresh memory (``eager``: the ops
    that did), the compiled forward allocates one [N, M] buffer (``compiled``): strictly fewer. A
    forward whose eager run already writes one (an in-place ReLU) has nothing to compare: skipped."""
    import pytest

    found = {"eager_n_by_m_writes": eager, "compiled_n_by_m_buffers": [str(c) for c in compiled]}
    if len(eager) < 2:
        pytest.skip(f"this forward's eager run writes {len(eager)} fresh [N, M] result(s): no intermediate to drop")
    assert len(compiled) == 1, f"compiled code allocates one [N, M] buffer (A, reused for Y), fewer than eager: {found}"
    return found


def assert_buffers_reused(temp_bytes: int, intermediates: int, each_bytes: int) -> dict:
    """§5.1's buffer planning: a program whose ``intermediates`` values of ``each_bytes`` are each dead
    once the next is made needs scratch memory (XLA's temp bytes) for at most all but two of them:
    buffers are reused by their lifetimes (the CPU ran the chain in one buffer, the H200 in two)."""
    found = {"temp_bytes": temp_bytes, "intermediates": intermediates, "bytes_each": each_bytes}
    most = (intermediates - 2) * each_bytes
    assert temp_bytes <= most, f"the intermediates' buffers are reused: at most {most} bytes of scratch: {found}"
    return found


def assert_stablehlo_and_hlo_are_different_irs(stablehlo: str, hlo: str) -> None:
    """§9.3: lower() gives StableHLO, an MLIR module that MLIR's parser reads (ops of the stablehlo
    dialect, the add and the ReLU still apart, no fusion); compile() gives XLA's own HLO, which MLIR's
    parser refuses and which has an ENTRY computation and the fusion that holds the add and the ReLU
    (the ReLU judged by what it computes: maximum, select, clamp alike, toolchains.pointwise)."""
    assert ir.parses_as_mlir(stablehlo), f"lower() must give an MLIR module MLIR's parser reads:\n{stablehlo[:2000]}"
    ops = pointwise.families(stablehlo, "stablehlo")
    assert "relu" in ops, f"the ReLU is missing from the program's StableHLO (no op computes it): {ops}"
    assert {"add", "relu"} <= set(ops) and "fusion" not in stablehlo, (
        f"StableHLO is before XLA's optimizations: the add and the ReLU are still separate ops: {ops}"
    )
    assert not ir.parses_as_mlir(hlo), f"compile() gives XLA's HLO, not MLIR, but MLIR's parser read it:\n{hlo[:2000]}"
    assert ir.hlo_entry(hlo), f"XLA's HLO has an ENTRY computation:\n{hlo[:2000]}"
    fused = pointwise.fusions_holding(hlo, {"add", "relu"})
    assert fused, f"one fusion must hold both the add and the ReLU; fusions: {list(ir.hlo_fusions(hlo))}\n{hlo}"


def assert_callbacks_ordered_by_the_program(ordered: str, unordered: str, callbacks: int) -> None:
    """§4.1: side effects the compiler may not reorder are ordered by the program itself. The same
    program's StableHLO with ``ordered=True`` threads a token through its ``callbacks`` host calls
    (each takes the token the one before returned); with ``ordered=False`` it has no token, so nothing
    but data could order them."""
    calls = [line for line in ordered.splitlines() if "custom_call" in line]
    threaded = [line for line in calls if "!stablehlo.token" in line]
    assert len(calls) >= callbacks and len(threaded) >= callbacks, (
        f"with ordered=True each of the {callbacks} callbacks takes and returns the program's token: {calls}"
    )
    assert "!stablehlo.token" not in unordered, "without ordered=True the program carries no token: no order"


def assert_fusion_spills_as_it_grows(usage_by_width: dict[int, dict[str, int]]) -> dict:
    """S5.2-too-big: the fused program at its narrowest hidden width keeps its state in registers,
    and growing the fusion (ptxas's figures by width, in growing order) makes it spill."""
    widths = sorted(usage_by_width)
    spills = {h: usage_by_width[h]["spill_stores"] for h in widths}
    assert spills[widths[0]] == 0 and spills[widths[-1]] > 0, (
        f"the fused pair by hidden width H: registers and spill bytes a thread (ptxas) {usage_by_width}; "
        f"expected none spilled at H = {widths[0]} and a spill once it grows"
    )
    return {"spill_bytes_by_width": spills}


def assert_grown_fusion_loses(fused_over_unfused: float, line: float) -> None:
    """S5.2-too-big: the fused program that spills runs at least ``line`` times the unfused pair's time."""
    assert fused_over_unfused >= line, (
        f"the spilling fusion took {fused_over_unfused:.2f}x the unfused pair's time; too big a fusion loses by "
        f"at least {line}x on this GPU"
    )


def assert_four_counts_differ(counts: dict[str, int]) -> dict[str, int]:
    """MC03 (§2.3): "연산 개수, 그래프 노드 개수, 커널 개수, 기계 명령 개수는 서로 다른 수치다", on one compiled
    forward: fewer kernels than math ops (fusion), more graph nodes than ops (one source op, the bias
    add, is a broadcast and an add), and more machine instructions than nodes. ``counts``: "ops",
    "nodes", "kernels", "instructions" (at least; None where the object code could not be read)."""
    ops, nodes, kernels, instructions = (counts[k] for k in ("ops", "nodes", "kernels", "instructions"))
    assert 0 < kernels < ops, (
        f"{kernels} kernels for {ops} math ops: fusion should leave fewer kernels than ops (keep the forward one "
        f"traced program, no host step between its ops): {counts}"
    )
    assert nodes > ops, f"{nodes} graph nodes for {ops} math ops: the bias add alone is two nodes: {counts}"
    assert instructions is None or instructions > nodes, (
        f"{instructions} machine instructions for {nodes} nodes: {counts}"
    )
    return counts


LINE = ["matmul", "add", "relu"]


def assert_layers_hand_off(stack: str, found: dict) -> dict:
    """Q4 and MC11 (§12.1): one stack's layers, each read from what it produced. The captured program
    and the high-level IR each hold the line's matmul, add and ReLU in order (the ReLU by what it
    computes), and the compiler runs the IR's ops in fewer kernels than there are ops (it fused)."""
    __tracebackhide__ = True
    missing = [layer for layer in ("captured", "IR") if not ir.is_subsequence(LINE, found[layer])]
    assert not missing, (
        f"{stack}: the {' and the '.join(missing)} should hold {' -> '.join(LINE)} in order; read: {found}"
    )
    ops = sum(1 for family in found["IR"] if family != "broadcast")
    assert 1 <= len(found["kernels"]) < ops, (
        f"{stack}: the compiler should run the IR's {ops} ops in fewer kernels (it fuses); it runs "
        f"{len(found['kernels'])}: {found['kernels']}"
    )
    return {f"{stack} {layer}": value for layer, value in found.items()}
