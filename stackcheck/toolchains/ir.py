"""Reading each stack's intermediate representations (course §4.3, §8.3, §9.3, §10.3).

One matcher normalizes op names across stacks, so a test reads "this IR holds
matmul -> add -> relu" for torch.export's ATen graph, Dynamo's FX graph, a jaxpr,
StableHLO, XLA's optimized HLO and MAX's graph alike. Patterns are prefix-agnostic
(``stablehlo.add``, ``rmo.add``, ``aten.add.Tensor`` and jaxpr's ``add`` are all "add").
"""

from __future__ import annotations

import re

from stackcheck.evidence import where
from stackcheck.evidence.compiles import fresh_jit
from stackcheck.toolchains import pointwise
from stackcheck.toolchains.mlir_context import xla_mlir as xla_mlir  # re-exported: tests read MLIR with it

# op family -> pattern; "add" must not match "addmm", so it needs a word boundary after it. The ReLU
# is any of the spellings that compute max(z, 0): relu, maximum/max, clamp_min/clamp, threshold.
OPS = {
    "matmul": re.compile(r"\b(?:matmul|mm|dot_general|dot)\b"),
    "broadcast": re.compile(r"\b(?:broadcast_in_dim|broadcast_to|broadcast|expand)\b"),
    "add": re.compile(r"\badd\b"),
    "relu": re.compile(r"\b(?:relu|maximum|max|clamp_min|clamp|threshold)\b"),
}
# Fused ops, each counted as every family it holds: addmm and linear (nn.Linear's forward) are a
# matmul and its bias add.
FUSED = {("matmul", "add"): re.compile(r"\b(?:addmm|linear)\b")}
# What machine code looks like: PTX memory and predicate instructions, x86 vector moves.
MACHINE = re.compile(r"^\s*(?:@%p\d+\s+)?(?:ld\.global|st\.global|setp\.\w+|vmovups|vfmadd\w*)\b", re.M)
# An HLO instruction's opcode: "%dot.3 = f32[2,2]{1,0} dot(...)" -> "dot".
HLO_OPCODE = re.compile(r"= (?:\(.*?\)|\S+) ([a-z][\w\-]*)\(")  # a tuple-typed result too: (f32[..], s8[..])
# The pass number in a name of XLA's pass dump: "module_0001.jit_f.0007.algsimp.txt" -> "0007".
PASS_NUMBER = re.compile(r"\.(\d{4})\.")


def op_sequence(text: str) -> list[str]:
    """Op families in the order their lines appear: the first op each line names (the op it calls,
    before the names of its inputs: ``clamp_min = aten.clamp_min(add, 0)`` is a ReLU), a fused op as
    each family it holds (``addmm`` is a matmul, then an add)."""
    found = []
    for line in text.splitlines():
        hits = [(m.start(), (op,)) for op, pattern in OPS.items() if (m := pattern.search(line))]
        hits += [(m.start(), ops) for ops, pattern in FUSED.items() if (m := pattern.search(line))]
        if hits:
            found += min(hits)[1]
    return found


def is_subsequence(wanted: list[str], seq: list[str]) -> bool:
    it = iter(seq)
    return all(op in it for op in wanted)


def machine_instructions(text: str) -> list[str]:
    return MACHINE.findall(text)


def parses_as_mlir(text: str) -> bool:
    """Whether MLIR's own parser (JAX's bindings) reads ``text`` as a module: StableHLO does, XLA's
    HLO text (its own format) does not."""
    context, mlir_ir = xla_mlir()
    with context:
        try:
            mlir_ir.Module.parse(text)
        except Exception:  # noqa: BLE001 - MLIRError and the like: not MLIR
            return False
    return True


# ---- extracting the IRs ------------------------------------------------------------------


def torch_export_graph(forward, *args) -> str:
    """torch.export's ATen-level graph of ``forward`` (course §8.3)."""
    import torch

    class Forward(torch.nn.Module):
        def forward(self, x, w, b):
            return forward(x, w, b)

    return str(torch.export.export(Forward(), args).graph_module.graph)


def core_aten(module_or_fn, *args):
    """``module_or_fn`` (a function of ``args`` or an ``nn.Module``, a Dynamo graph among them) traced
    at the dispatcher on ``args``, functionalized, with core ATen's decompositions, dead code removed
    (course §8.3): the graph torch.export's ``run_decompositions`` gives, without its fixed cost (half
    a second a call on 2 cores). Whatever public torch function a program spells its matmul with, it
    becomes ``mm``, ``bmm`` or ``addmm`` here."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    traced = make_fx(torch.func.functionalize(module_or_fn), decomposition_table=core_aten_decompositions())
    graph_module = traced(*args)
    graph_module.graph.eliminate_dead_code()  # as export does: a step computed and never used is no op
    graph_module.recompile()
    return graph_module


# Core ATen's matmuls (every spelling of X @ W decomposes to one of these) and its adds; addmm is a
# matmul and its bias add in one node.
CORE_FAMILIES = {"aten.mm": ("matmul",), "aten.bmm": ("matmul",), "aten.addmm": ("matmul", "add")}
CORE_ADDS = {"aten.add"}
# ReLU's values on the probes: max(z, 0), NaN kept (course §2.2, X-relu-edges).
NEAREST = 8  # the nodes a ReLU's input may be among: the nearest it reads (where(lt(z, 0), 0, z) reads z third)
PROBES = (float("-inf"), -3.0, -1.0, -0.5, -1e-30, -0.0, 0.0, 1e-30, 0.5, 1.0, 3.0, float("inf"), float("nan"))


def _recorded_values(graph_module, args) -> dict:
    """Each node of ``graph_module`` and the value it computes on ``args``."""
    import torch

    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            values[node] = super().run_node(node)
            return values[node]

    Recorder(graph_module).run(*args)
    return values


def _ancestors(node) -> list:
    """The nodes ``node`` reads, directly or not, nearest first (by graph order)."""
    seen, todo = set(), list(node.all_input_nodes)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return sorted(seen, key=lambda n: -_position(n))


def _position(node) -> int:
    return list(node.graph.nodes).index(node)


def _evaluated_from(graph_module, source, target, probe, values):
    """``target``'s value with ``source`` set to ``probe`` and every other input of the program at the
    value it had (``values``): the learner's arguments, and the state the program holds that the
    capture lifted into inputs (a module's buffer, a parameter, a captured tensor), read from the
    program's own example inputs."""
    import torch

    env = {source: probe}
    for node in graph_module.graph.nodes:
        if node is target.next:
            break
        if node in env or node.op == "output":
            continue
        if node.op == "placeholder":
            if node in values:
                env[node] = values[node]
            continue
        if not all(i in env for i in node.all_input_nodes):
            continue
        if node.op == "get_attr":
            env[node] = torch.fx.graph_module._get_attr(graph_module, node.target)
        elif node.op == "call_function":
            args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), env.__getitem__)
            env[node] = node.target(*args, **kwargs)
    return env.get(target)


def _relu_of(graph_module, node, values, depends):
    """The node whose ReLU ``node`` computes, judged by its values on the probes (negative, zero,
    positive, NaN, ±inf) with that node's value replaced by them, not by its name: ``maximum``,
    ``where``, ``clamp`` and ``relu`` alike; None if it computes no ReLU of an earlier node."""
    import torch

    out = values.get(node)
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        return None
    for source in _ancestors(node)[:NEAREST]:
        value = values.get(source)
        if not isinstance(value, torch.Tensor) or value.shape != out.shape or value.dtype != out.dtype:
            continue
        if not depends[source]:
            continue
        probes = torch.tensor(PROBES, dtype=value.dtype)
        probe = probes.repeat(value.numel() // len(PROBES) + 1)[: value.numel()].reshape(value.shape)
        try:
            with torch.no_grad():
                got = _evaluated_from(graph_module, source, node, probe.to(value.device), values)
        except Exception:  # an op that cannot take the probe computes no ReLU of it
            continue
        if not isinstance(got, torch.Tensor) or got.shape != probe.shape:
            continue
        want = torch.where(probe > 0, probe, torch.zeros_like(probe)).where(~probe.isnan(), probe)
        got = got.cpu()
        if bool(((got == want) | (got.isnan() & want.isnan())).all()):
            return source
    return None


def _is_bias_add(node, values) -> bool:
    """An add of two tensors, one of which broadcasts over the other: fewer elements, or a stride of 0."""
    import torch

    operands = [values.get(a) for a in node.args[:2]]
    if not all(isinstance(v, torch.Tensor) for v in operands):
        return False
    out = values[node]
    return any(v.numel() < out.numel() or 0 in v.stride() for v in operands)


def torch_math_ops(program, *args) -> list[str]:
    """The math op families of a torch program, in graph order, judged on its canonical form: core
    ATen (``core_aten``'s graph, or a decomposed ExportedProgram). A matmul is one of core ATen's
    matmuls, a bias add an add whose one operand broadcasts, a ReLU any node that computes max(z, 0)
    of an earlier node z on the probes (however it is spelled); views and copies are no ops."""
    import torch

    graph_module = program.module() if isinstance(program, torch.export.ExportedProgram) else program
    values = _recorded_values(graph_module, args)
    depends = {}
    for node in graph_module.graph.nodes:
        depends[node] = node.op == "placeholder" or any(depends[i] for i in node.all_input_nodes)
    found, relu_sources = [], set()
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        packet = str(getattr(node.target, "overloadpacket", node.target))
        if packet in CORE_FAMILIES:
            found += CORE_FAMILIES[packet]
        elif packet in CORE_ADDS and _is_bias_add(node, values):
            found.append("add")
        elif (source := _relu_of(graph_module, node, values, depends)) is not None and source not in relu_sources:
            relu_sources.add(source)
            found.append("relu")
    return found


def dynamo_graphs(forward, *args):
    """The FX graphs Dynamo captures from ``forward``, via a recording backend of our own."""
    import torch

    graphs = []

    def record(gm, example_inputs):
        gm.meta["example_inputs"] = list(example_inputs)  # for core_aten(gm, *inputs)
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    result = torch.compile(forward, backend=record, dynamic=False)(*args)
    return graphs, result


def jax_stages(forward, *args) -> dict:
    """JAX's staged path (course §9.3): jaxpr, StableHLO (lowered) and optimized HLO (compiled)."""
    far = where.elsewhere(jax_stages, forward, *args)
    if far is not where.HERE:
        return far
    import jax

    lowered = jax.jit(forward).lower(*args)
    compiled = lowered.compile()
    return {
        "jaxpr": str(jax.make_jaxpr(forward)(*args)),
        "stablehlo": lowered.as_text(),
        "hlo": compiled.as_text(),
        "lowered": lowered,
        "compiled": compiled,
    }


def hlo_fusions(hlo: str) -> dict[str, str]:
    """Fused computations of an optimized HLO module that its entry calls, by name -> body text."""
    bodies = dict(re.findall(r"^(%?[\w.\-]+) \([^\n]*\{\n(.*?)^\}", hlo, re.M | re.S))
    called = re.findall(r"\bfusion\([^\n]*?calls=(%?[\w.\-]+)", hlo)
    return {name: bodies.get(name, "") for name in called}


def hlo_entry(hlo: str) -> list[str]:
    """The instructions of an optimized HLO module's ENTRY computation, one line each."""
    body = re.search(r"^ENTRY [^\n]*\{\n(.*?)^\}", hlo, re.M | re.S)
    return [line.strip() for line in body.group(1).splitlines() if line.strip()] if body else []


def hlo_kept(hlo: str, shape: str) -> list[str]:
    """The ENTRY values of an optimized HLO module of ``shape`` (e.g. "f32[64,16]") that are neither
    its result nor a parameter: tensors the program writes to memory and reads back."""
    return [
        line.split(" = ")[0]
        for line in hlo_entry(hlo)
        if not line.startswith("ROOT") and f" = {shape}" in line and "parameter(" not in line
    ]


def xla_extra_bytes(compiled, compulsory: int) -> float | None:
    """XLA's cost analysis of a compiled program: bytes accessed beyond ``compulsory``; None where
    XLA cannot count them (a library call's bytes are reported as negative)."""
    cost = compiled.cost_analysis()
    accessed = (cost[0] if isinstance(cost, list) else cost).get("bytes accessed", -1.0)
    return accessed - compulsory if accessed >= 0 else None


def hlo_matmul_op(hlo: str) -> str:
    """How an optimized HLO module's ENTRY carries the program's matmul (the instruction whose
    metadata names dot_general): its opcode, with the library target or fusion kind it names, e.g.
    "custom-call __cublas$gemm", "fusion __ynn_fusion", "fusion kLoop" or "dot"."""
    for line in hlo_entry(hlo):
        if "dot_general" not in line:
            continue
        opcode = HLO_OPCODE.search(line)
        details = (
            re.search(p, line) for p in (r'custom_call_target="([^"]+)"', r'"kind":"(__[\w$]+)"', r"kind=(k\w+)")
        )
        detail = next((d[1] for d in details if d), None)
        return (opcode[1] if opcode else "?") + (f" {detail}" if detail else "")
    return "none"


def tpu_matmul_and_relu(hlo: str) -> dict:
    """§7.3: where an optimized HLO module (a TPU's) holds the matmul and the ReLU: the dot or
    convolution instructions anywhere in it (the MXU's work, emitted by XLA), the ENTRY's custom calls
    that name a GEMM library (none on a TPU), and the fusions computing a ReLU (the VPU's work)."""

    return {
        "matmul_ops": sorted(set(re.findall(r"= \S+ (dot|convolution)\(", hlo))),
        "library_calls": [line for line in hlo_entry(hlo) if re.search(r"(?i)custom-call.*(gemm|blas|matmul)", line)],
        "relu_fusions": pointwise.fusions_holding(hlo, {"relu"}),
    }


NOT_KERNELS = {"parameter", "constant", "bitcast", "tuple", "get-tuple-element", "copy"}
ELEMENTWISE_OPS = re.compile(
    r"= stablehlo\.(add|subtract|multiply|divide|maximum|minimum|negate|tanh|exponential|logistic|power|select|compare|"
    r"sqrt|rsqrt|log|abs|clamp)\b"
)


def elementwise_op_count(stablehlo: str) -> int:
    """How many elementwise ops a program's StableHLO writes (before XLA fuses any)."""
    return len(ELEMENTWISE_OPS.findall(stablehlo))


LAYOUT_OPS = {"parameter", "constant", "slice", "bitcast", "copy", "transpose", "reshape", "broadcast",
              "concatenate", "pad", "dynamic-slice", "tuple", "get-tuple-element"}  # fmt: skip


def hlo_kernel_kinds(hlo: str) -> list[str]:
    """Each kernel of an optimized HLO module's ENTRY as "matmul" (a dot, a library GEMM call, or a
    fusion holding one), "layout" (a fusion that only moves data: a slice, a copy, a transpose) or
    "elementwise" (any other fusion or op: the arithmetic around the matmuls)."""
    fusions = hlo_fusions(hlo)
    kinds = []
    for line in hlo_entry(hlo):
        opcode = HLO_OPCODE.search(line)
        if not opcode or opcode[1] in NOT_KERNELS:
            continue
        called = re.search(r"calls=(%?[\w.\-]+)", line)
        inside = set(HLO_OPCODE.findall(fusions.get(called[1], ""))) if called else {opcode[1]}
        if inside & {"dot", "convolution", "custom-call"}:
            kinds.append("matmul")
        else:
            kinds.append("layout" if inside <= LAYOUT_OPS else "elementwise")
    return kinds


def hlo_kernels(hlo: str) -> list[str]:
    """The instructions of an optimized HLO module's ENTRY that run as kernels or library calls (its
    fusions, dots, custom calls), by opcode: parameters, constants and views left out."""
    found = (HLO_OPCODE.search(line) for line in hlo_entry(hlo))
    return [m[1] for m in found if m and m[1] not in NOT_KERNELS]


def hlo_optimization(hlo: str, shape: str) -> dict:
    """What a backend's optimizer made of a program whose result is ``shape``: the ENTRY instructions
    that run as kernels or library calls ("ops"), and the values of that shape kept in memory between
    them ("kept")."""
    return {"ops": hlo_kernels(hlo), "kept": hlo_kept(hlo, shape)}


def hlo_opcodes(hlo: str) -> list[str]:
    """The opcode of every instruction of an optimized HLO module (fused computations included)."""
    return re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = \S+ ([a-z][\w\-]*)\(", hlo, re.M)


def call_targets(graph) -> list[str]:
    """The targets of an FX graph's calls, as text (``aten.relu.default``, ``<built-in function add>``)."""
    return [str(node.target) for node in graph.nodes if node.op in ("call_function", "call_method")]


def xla_dump(forward, *args, folder) -> list[str]:
    """Compile ``forward`` with XLA dumping every stage into ``folder``, its code generators' output
    included (the CPU's LLVM IR: JAX 0.11 writes it only when ``xla_dump_emitter_re`` asks; a jaxlib
    that does not know the option writes it unasked); the dumped file names. A program new to JAX
    (``fresh_jit``): one loaded from a persistent compilation cache is not compiled, and dumps nothing."""
    import jax

    lowered = fresh_jit(jax, forward).lower(*args)
    try:
        lowered.compile(compiler_options={"xla_dump_to": str(folder), "xla_dump_emitter_re": ".*"})
    except Exception as error:  # jaxlib's own error type differs by version; only this one is expected
        if "xla_dump_emitter_re" not in str(error):
            raise
        lowered.compile(compiler_options={"xla_dump_to": str(folder)})
    return sorted(p.name for p in folder.iterdir())


# XLA's stages (course §5.1, after the official architecture) and the passes whose dumps mark each;
# the dump holds a pass only when it changed the module. The library call: the CPU's dot-library
# rewriter (a YNNPACK or oneDNN fusion), the GPU's GEMM rewriters (cuBLAS, or a Triton GEMM fusion).
XLA_STAGES = {
    "hardware-independent optimization": re.compile(r"\.after_(?:algsimp|simplify|cse|dce)"),
    "target-specific optimization": re.compile(r"\.after_layout-assignment"),
    "library call selection": re.compile(r"\.after_[\w-]*(?:dot-library|gemm|cublas)"),
    # The CPU's LLVM IR and object file; the GPU's thunk sequence, the kernels and library calls its
    # code generation produced (XLA on the H200 dumps no .ll or .ptx for this program).
    "code generation": re.compile(r"\.(?:ll|ptx|o|cubin)$|\.thunk_sequence\.txt$"),
}


def xla_pass_dump(forward, *args, folder) -> list[str]:
    """Compile ``forward`` with XLA dumping the module after every pass that changed it, into
    ``folder``; the dumped file names, in pass order (their number) with the final code last. A
    program new to JAX, as in ``xla_dump``."""
    import jax

    options = {"xla_dump_to": str(folder), "xla_dump_hlo_pass_re": ".*", "xla_gpu_dump_llvmir": True}
    fresh_jit(jax, forward).lower(*args).compile(compiler_options=options)
    names = [p.name for p in folder.iterdir()]
    passes = sorted((n for n in names if PASS_NUMBER.search(n)), key=lambda n: int(PASS_NUMBER.search(n)[1]))
    return passes + sorted(n for n in names if not PASS_NUMBER.search(n))


def llo_files(names: list[str]) -> list[str]:
    """The dumped files named for LLO (the TPU's low-level IR, §9.7)."""
    return [n for n in names if re.search(r"(?i)(^|[._-])llo([._-]|$)", n)]


LEVELS = ("ttir", "ttgir", "llir", "ptx", "cubin", "sass")
VIRTUAL_REGISTERS = re.compile(r"\.reg \.\w+ \s*%\w+<\d+>")  # PTX's `.reg .b32 %r<12>;`, allocated by ptxas
MACHINE_LOAD_STORE = re.compile(r"\b(?:LDG|STG)\.E\b")  # SASS: global load/store on physical registers


def disassemble(cubin: bytes) -> str:
    """The SASS (the GPU's own machine instructions) in a cubin, by the nvdisasm Triton ships: any
    machine, no GPU needed."""
    import subprocess
    import tempfile

    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        done = subprocess.run([knobs.nvidia.nvdisasm.path, "-c", f.name], capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"nvdisasm failed: {done.stderr[-500:]}")
    return done.stdout


EM_CUDA = 190  # the ELF machine number of NVIDIA GPU objects (cubins)


def cuda_objects(blob: bytes) -> list[bytes]:
    """The cubins inside ``blob`` (a compiled MAX model, say): each ELF object for EM_CUDA, cut at
    the end of its last section or header table."""
    import struct

    found = []
    for match in re.finditer(rb"\x7fELF\x02", blob):  # 64-bit ELF
        o = match.start()
        if len(blob) < o + 64 or struct.unpack_from("<H", blob, o + 18)[0] != EM_CUDA:
            continue
        phoff, shoff = struct.unpack_from("<QQ", blob, o + 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", blob, o + 0x36)
        end = max(phoff + phnum * phentsize, shoff + shnum * shentsize)
        for i in range(shnum):
            header = o + shoff + i * shentsize
            (kind,) = struct.unpack_from("<I", blob, header + 4)
            offset, size = struct.unpack_from("<QQ", blob, header + 0x18)
            if kind != 8:  # SHT_NOBITS occupies no bytes in the file
                end = max(end, offset + size)
        found.append(blob[o : o + end])
    return found


def cubin_sm(cubin: bytes) -> int:
    """The SM a cubin's machine code is for (75 for sm_75; 90 for sm_90 and sm_90a), read from its
    ELF header's e_flags: bits 8-15 from CUDA's ELF ABI version 8 on, bits 0-7 before."""
    import struct

    (flags,) = struct.unpack_from("<I", cubin, 0x30)
    return (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF


# FMNMX d, a, b, p is min(a, b) when its predicate operand p is true and max(a, b) when false: "!PT"
# (not true) is a max, "PT" a min, a predicate register chooses at run time.
FMNMX = re.compile(r"\bFMNMX(?:\.\w+)*\s+[^;]*,\s*(!?)(U?P\w+)\s*;")


def sass_kernels(cubins: list[bytes]) -> dict[str, dict]:
    """Each kernel in ``cubins``: its target, the set of SASS opcodes (without modifiers) it uses, and
    what its FMNMX instructions take ("max", "min", or "either" where a predicate register decides)."""
    kernels = {}
    for cubin in cubins:
        sass = disassemble(cubin)
        target = re.search(r"^\s*\.target\s+(\S+)", sass, re.M)
        for name, body in re.findall(r"^\s*\.global\s+(\S+)\n(.*?)(?=^\s*\.global\s|\Z)", sass, re.M | re.S):
            ops = set(re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]+)", body))
            takes = {
                "either" if p not in ("PT", "UPT") else ("max" if bang else "min") for bang, p in FMNMX.findall(body)
            }
            kernels[name] = {"target": target.group(1) if target else None, "ops": ops, "fmnmx": takes}
    return kernels


def triton_stages(compiled) -> dict:
    """A compiled Triton kernel's stages (ttir ... cubin) and the cubin's SASS, as ``LEVELS`` names them."""
    return {**compiled.asm, "sass": disassemble(compiled.asm["cubin"])}


def lowering_facts(asm: dict) -> dict[str, dict[str, bool]]:
    """For each of Triton's stages: whether it holds whole tensors, a structured loop, a thread
    layout, address arithmetic, a branch-and-phi loop, global loads/stores."""
    facts = {}
    for level in ("ttir", "ttgir", "llir", "ptx", "sass"):
        text = asm[level]
        facts[level] = {
            "tensors": "tensor<" in text,
            "structured loop": "scf.for" in text,
            "thread layout": bool(re.search(r"#\w*blocked", text)),
            "addresses": "getelementptr" in text,
            "branch loop": " phi " in text or bool(re.search(r"\bbra\b", text)),
            "global load/store": "ld.global" in text and "st.global" in text,
            "virtual registers": bool(VIRTUAL_REGISTERS.search(text)),
            "machine load/store": bool(MACHINE_LOAD_STORE.search(text)),
        }
    facts["cubin"] = {"machine code object": asm["cubin"][:4] == b"\x7fELF"}
    return facts


def max_custom_ops(graph) -> list[str]:
    """The registered names of the custom ops a MAX graph calls (``mo.custom [symbol = "..."]``), in order."""
    return re.findall(r'mo\.custom\b[^\n]*?\bsymbol = "(\w+)"', str(graph))


def max_kernels(model) -> list[list[str]]:
    """The kernels a compiled MAX model runs that compute the graph's ops: each as the mo ops (and
    custom ops) its summary names, in order; the shape and buffer bookkeeping left out."""
    found = (re.findall(r"\bmo\.(?!static\b)[\w.]+|\bcustom__\w+", summary) for summary in model.kernel_summaries)
    return [ops for ops in found if ops]


def max_recorded_steps(graph) -> dict[str, tuple[str, list[str]]]:
    """What a MAX graph's first three outputs (A, Z, Y of ``max_steps``) were recorded as: each its op
    and operands, with an operand that is another of the three named by it ("a") and an input by
    "x", "w" or "b"."""
    text = str(graph)
    defined = {m[0]: (m[1], re.findall(r"%\w+", m[2])) for m in re.findall(r"(%\w+) = ([\w.]+)\(([^)]*)\)", text)}
    outputs = re.search(r"mo\.output ([^:]*)", text).group(1).replace(" ", "").split(",")[:3]
    names = {**dict(zip(outputs, "azy")), "%arg0": "x", "%arg1": "w", "%arg2": "b"}
    return {names[o]: (defined[o][0], [names.get(v, v) for v in defined[o][1]]) for o in outputs if o in defined}


def jaxpr_ops(jaxpr) -> dict[str, int]:
    """Each primitive's count in a (closed) jaxpr, nested jaxprs included as often as they are called
    (the printed form names a repeated sub-jaxpr once); a while loop's body counts once."""
    counts: dict[str, int] = {}
    for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
        for sub in _sub_jaxprs(eqn):
            for name, n in jaxpr_ops(sub).items():
                counts[name] = counts.get(name, 0) + n
    return counts


def _sub_jaxprs(eqn) -> list:
    """The jaxprs (open or closed) an equation's parameters hold: a call's body, a cond's branches."""
    return [
        sub
        for value in eqn.params.values()
        for sub in (value if isinstance(value, (tuple, list)) else (value,))
        if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns")
    ]


def jaxpr_leaves(jaxpr) -> list[str]:
    """The primitives of a (closed) jaxpr that compute, in order, nested jaxprs opened: a call that
    wraps one (jit, custom_jvp_call, ...) is opened, not counted itself."""
    found = []
    for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        subs = _sub_jaxprs(eqn)
        found += jaxpr_leaves(subs[0]) if subs else [eqn.primitive.name]
    return found


# The longest machine instruction, in bytes, by ELF machine: x86-64's 15, AArch64's fixed 4.
LONGEST_INSTRUCTION = {62: 15, 183: 4}


def elf_code_bytes(obj: bytes) -> tuple[int, int] | None:
    """(bytes of executable sections, the ELF machine number) of a 64-bit little-endian object file;
    None for another format (macOS writes Mach-O)."""
    import struct

    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    machine = struct.unpack_from("<H", obj, 0x12)[0]
    table = struct.unpack_from("<Q", obj, 0x28)[0]
    size, count = struct.unpack_from("<HH", obj, 0x3A)
    headers = (struct.unpack_from("<IIQQQQ", obj, table + i * size) for i in range(count))
    return sum(h[5] for h in headers if h[2] & 0x4), machine  # SHF_EXECINSTR


def jax_counts(forward, *args) -> dict:
    """MC03's counts of one JAX forward compiled for the CPU (``args`` CPU arrays): the jaxpr's nodes
    (``jaxpr_leaves``), the optimized HLO's kernels and library calls (``hlo_kernels``), and the
    machine instructions XLA generated for its kernels, at least: the bytes of code in the object
    files it wrote over the longest instruction (a library call's own code is not among them; None
    where they are not ELF)."""
    far = where.elsewhere(jax_counts, forward, *args)
    if far is not where.HERE:
        return far
    import pathlib
    import tempfile

    import jax

    with tempfile.TemporaryDirectory() as folder:
        names = xla_dump(forward, *args, folder=pathlib.Path(folder))
        optimized = next(n for n in names if n.endswith("cpu_after_optimizations.txt"))
        hlo = (pathlib.Path(folder) / optimized).read_text()
        code = [elf_code_bytes((pathlib.Path(folder) / n).read_bytes()) for n in names if n.endswith(".o")]
    readable = bool(code) and None not in code
    return {
        "nodes": jaxpr_leaves(jax.make_jaxpr(forward)(*args)),
        "kernels": hlo_kernels(hlo),
        "instructions_at_least": sum(b // LONGEST_INSTRUCTION.get(m, 15) for b, m in code) if readable else None,
    }


def llvm_vector_ops(llvm: str, function: str) -> dict[str, set[int]]:
    """The float32 lanes of ``function``'s loads, stores and max calls, in unoptimized LLVM IR
    (the first definition whose name holds ``function``): {"load": {8}, "store": {8}, "max": {8}}."""
    start = re.search(rf"^define [^\n]*{re.escape(function)}[^\n]*\{{$", llvm, re.M)
    if start is None:
        raise AssertionError(f"no definition of {function} in the LLVM IR")
    body = llvm[start.end() : llvm.index("\n}", start.end())]
    lanes = r"(?:<(\d+) x float>|float)"  # a scalar is one lane

    def widths(pattern: str) -> set[int]:
        return {int(n or 1) for n in re.findall(pattern, body)}

    return {
        "load": widths(rf"= load {lanes},"),
        "store": widths(rf"store {lanes} "),
        "max": widths(r"@llvm\.(?:maxnum|maximum)\.(?:v(\d+))?f32\("),
    }


FAMILIES = {
    "stablehlo": {"stablehlo.dot_general", "stablehlo.add", "stablehlo.maximum"},
    "hlo_opcodes": {"dot", "add", "maximum"},
}
