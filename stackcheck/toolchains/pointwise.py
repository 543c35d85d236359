"""What the elementwise ops of a JAX program or a MAX graph compute, read from its IR (course §4.3,
§5.2, §9.3, §12.1).

JAX's three stages are read into one flat graph each: a jaxpr's equations, StableHLO's ops (parsed
by MLIR's own parser), XLA's optimized HLO instructions; a MAX graph's mo ops too. Calls, nested
jits, custom_jvp bodies and fusions are inlined where they are used (a node keeps the fusion it
came from). Op families come from the canonical op names (``dot_general``, ``dot`` and mo's
``matmul`` are a matmul, ``broadcast_in_dim`` and ``broadcast`` a broadcast, ``add`` an add). The
ReLU is not read from a name: a node is a ReLU where, evaluated on probe values (negative, zero,
positive, NaN, +-inf) in place of an earlier node z, it gives max(z, 0) with NaN kept, whatever
spells it: ``max``, ``maximum``, ``where``/``select``, ``clamp``, a call of ``jax.nn.relu``, mo's
``relu``."""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field

PROBES = (-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, float("nan"), float("inf"), float("-inf"))
NEAREST = 8  # earlier nodes tried as the z of a candidate ReLU
FAMILIES = {"matmul": "matmul", "broadcast": "broadcast", "add": "add"}


@dataclass
class Node:
    name: str
    op: str  # normalized: add, sub, mul, div, max, min, neg, abs, compare, select, select_n, clamp,
    # convert, same, constant, parameter, matmul, broadcast (also "same"), or the op's own name
    operands: list[str] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    fusion: str | None = None  # the fused computation (HLO) it was inlined from


class Unknown(Exception):
    """A value the probe evaluation cannot compute (another input, an op that is not elementwise)."""


# ---- the op names of each form, normalized ----

NAMES = {
    "add": "add",
    "sub": "sub",
    "subtract": "sub",
    "mul": "mul",
    "multiply": "mul",
    "div": "div",
    "divide": "div",
    "max": "max",
    "maximum": "max",
    "min": "min",
    "minimum": "min",
    "neg": "neg",
    "negate": "neg",
    "abs": "abs",
    "compare": "compare",
    "select": "select",
    "select_n": "select_n",
    "clamp": "clamp",
    "convert": "convert",
    "convert_element_type": "convert",
    "constant": "constant",
    "parameter": "parameter",
    "dot_general": "matmul",
    "dot": "matmul",
    "broadcast_in_dim": "broadcast",
    "broadcast": "broadcast",
    "reshape": "same",
    "bitcast": "same",
    "copy": "same",
    "copy_p": "same",
    "transpose": "same",
    "squeeze": "same",
    "expand_dims": "same",
}
COMPARISONS = {"lt": "LT", "le": "LE", "gt": "GT", "ge": "GE", "eq": "EQ", "ne": "NE"}


def graph(text: str, form: str) -> list[Node]:
    """The flat graph of ``text``, a program's ``form``: JAX's "jaxpr", "stablehlo" or "hlo", or "mo"
    (a MAX graph, as ``str(graph)`` prints it)."""
    return {"jaxpr": _jaxpr, "stablehlo": _stablehlo, "hlo": _hlo, "mo": _mo}[form](text)


def families(text: str, form: str) -> list[str]:
    """The program's op families in order (matmul, broadcast, add, relu), the ReLU judged by its values."""
    return [family for family, _ in _families(graph(text, form))]


def fusions_holding(hlo: str, wanted: set[str]) -> list[str]:
    """The fusions of an optimized HLO module holding every family of ``wanted`` (the ReLU by values)."""
    holding: dict[str, set] = {}
    for family, node in _families(graph(hlo, "hlo")):
        if node.fusion is not None:
            holding.setdefault(node.fusion, set()).add(family)
    return sorted(name for name, held in holding.items() if wanted <= held)


def _families(nodes: list[Node]) -> list[tuple[str, Node]]:
    by_name = {n.name: n for n in nodes}
    found, sources = [], set()
    for node in nodes:
        if node.op in FAMILIES:
            found.append((FAMILIES[node.op], node))
        elif node.op not in ("constant", "parameter", "same", "convert", "compare"):
            source = _relu_of(node, by_name)
            if source is not None and source not in sources:
                sources.add(source)
                found.append(("relu", node))
    return found


def _relu_of(node: Node, by_name: dict[str, Node]) -> str | None:
    """The earlier node whose ReLU ``node`` computes, by evaluating it on the probes; else None."""
    for source in _ancestors(node, by_name)[:NEAREST]:
        try:
            got = [_value(node.name, by_name, {source: p}, {}) for p in PROBES]
        except (Unknown, RecursionError):
            continue
        want = [p if (p > 0 or math.isnan(p)) else 0.0 for p in PROBES]
        if all(_same(g, w) for g, w in zip(got, want)):
            return source
    return None


def _same(got, want: float) -> bool:
    """Equal as the torch judge compares (-0 equals 0), NaN where NaN is wanted."""
    if isinstance(got, bool) or not isinstance(got, float):
        return False
    return math.isnan(got) if math.isnan(want) else got == want


def _ancestors(node: Node, by_name: dict[str, Node]) -> list[str]:
    """Earlier non-constant nodes ``node`` reads, nearest first (breadth first)."""
    seen, order, frontier = set(), [], list(node.operands)
    while frontier and len(order) < 4 * NEAREST:
        following = []
        for name in frontier:
            if name in seen or name not in by_name:
                continue
            seen.add(name)
            if by_name[name].op != "constant":
                order.append(name)
            following += by_name[name].operands
        frontier = following
    return order


def _value(name: str, by_name: dict[str, Node], given: dict, memo: dict):
    if name in given:
        return given[name]
    if name in memo:
        return memo[name]
    node = by_name.get(name)
    if node is None or node.op == "parameter":
        raise Unknown(name)
    if node.op == "constant":
        if node.attrs.get("value") is None:
            raise Unknown(name)
        value = node.attrs["value"]
    else:
        args = [_value(o, by_name, given, memo) for o in node.operands]
        value = _apply(node, args)
    memo[name] = value
    return value


def _apply(node: Node, args: list):
    op = node.op
    if op in ("same", "broadcast") and args:
        return args[0]
    if op == "convert" and args:
        return bool(args[0]) if node.attrs.get("boolean") else float(args[0])
    if op == "compare" and len(args) == 2:
        a, b = args
        return {"LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b, "EQ": a == b, "NE": a != b}[
            node.attrs["direction"]
        ]
    if op == "select" and len(args) == 3:
        return args[1] if args[0] else args[2]
    if op == "select_n" and len(args) >= 2:
        return args[1 + int(args[0])]
    if op == "not" and len(args) == 1:
        return not args[0]
    if op == "relu" and len(args) == 1:  # mo's ReLU primitive
        return _max(float(args[0]), 0.0)
    if op == "clamp" and len(args) == 3:
        return _min(_max(args[1], args[0]), args[2])
    binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": _mul, "div": _div, "max": _max, "min": _min}
    if op in binary and len(args) == 2:
        return binary[op](float(args[0]), float(args[1]))
    if op == "neg" and len(args) == 1:
        return -float(args[0])
    if op == "abs" and len(args) == 1:
        return abs(float(args[0]))
    raise Unknown(op)


def _max(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return float("nan")
    if a == b == 0:  # XLA's maximum: +0 over -0
        return 0.0 if math.copysign(1, a) > 0 or math.copysign(1, b) > 0 else a
    return max(a, b)


def _min(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return float("nan")
    if a == b == 0:
        return -0.0 if math.copysign(1, a) < 0 or math.copysign(1, b) < 0 else a
    return min(a, b)


def _mul(a: float, b: float) -> float:
    return a * b if not (math.isinf(a) and b == 0 or math.isinf(b) and a == 0) else float("nan")


def _div(a: float, b: float) -> float:
    if b == 0:
        return float("nan") if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


def _number(text: str):
    text = text.strip()
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    try:
        return float(text)
    except ValueError:
        return None


# ---- StableHLO, through MLIR's parser ----


def _stablehlo(text: str) -> list[Node]:
    from stackcheck.toolchains.mlir_context import xla_mlir

    context, mlir = xla_mlir()
    with context:
        module = mlir.Module.parse(text)
        functions = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                functions[str(op.attributes["sym_name"]).strip('"')] = op
        main = functions.get("main") or next(iter(functions.values()))
        nodes: list[Node] = []
        block = main.regions[0].blocks[0]
        names = {}
        for i, arg in enumerate(block.arguments):
            names[_key(arg)] = f"arg{i}"
            nodes.append(Node(f"arg{i}", "parameter"))
        _mlir_block(block, names, functions, nodes, "", [0])
    return nodes


def _key(value) -> str:
    return value.get_name()


def _mlir_block(block, names: dict, functions: dict, nodes: list, prefix: str, counter: list) -> list[str]:
    """Append the ops of ``block`` to ``nodes`` (calls inlined); the names its return gives back."""
    for op in block.operations:
        kind = op.operation.name
        operands = [names.get(_key(v), "?") for v in op.operands]
        if kind in ("func.return", "stablehlo.return"):
            return operands
        if kind == "func.call" or kind == "call":
            callee = functions.get(str(op.attributes["callee"]).lstrip("@").strip('"'))
            if callee is None:
                results = [f"{prefix}{_key(r)}" for r in op.results]
                nodes.append(Node(results[0] if results else f"{prefix}call", kind, operands))
            else:
                counter[0] += 1
                inner_block = callee.regions[0].blocks[0]
                inner = {_key(a): operands[i] for i, a in enumerate(inner_block.arguments)}
                returned = _mlir_block(inner_block, inner, functions, nodes, f"{prefix}c{counter[0]}.", counter)
                for result, given in zip(op.results, returned):
                    names[_key(result)] = given
            continue
        short = kind.removeprefix("stablehlo.")
        node = Node(f"{prefix}{_key(op.results[0])}" if len(op.results) else f"{prefix}{kind}", NAMES.get(short, kind))
        node.operands = operands
        if short == "compare":
            direction = str(op.attributes["comparison_direction"])
            node.attrs["direction"] = re.search(r"\b(LT|LE|GT|GE|EQ|NE)\b", direction)[1]
        if short == "constant":
            node.attrs["value"] = _splat(op.attributes["value"])
        for result in op.results:
            names[_key(result)] = node.name
        nodes.append(node)
    return []


def _splat(attribute):
    """The one value of a splat dense constant (MLIR prints inf and NaN as their bits), else None."""
    match = re.fullmatch(r"dense<([^\[\]<>,]+)>\s*:.*?(bf16|f16|f32|f64)?>?", str(attribute).strip())
    if not match:
        return None
    text, kind = match[1].strip(), match[2]
    if text.startswith("0x") and kind:
        bits = int(text, 16)
        if kind == "bf16":
            bits, kind = bits << 16, "f32"
        form = {"f16": ">e", "f32": ">f", "f64": ">d"}[kind]
        return struct.unpack(form, bits.to_bytes(struct.calcsize(form), "big"))[0]
    return _number(text)


# ---- a MAX graph (the mo dialect), as text ----

MO_OP = re.compile(r"^\s*(%\w+) = (?:r?mo\.)+([\w.]+)(?: \[[^\]]*\])?(?:\(([^)]*)\)| <#M\.dense_array<([^<>]*)>)", re.M)
# mo's op names that differ from the normalized ones; its ReLU primitive is max(z, 0), NaN kept
MO_NAMES = {"broadcast_to": "broadcast", "static.broadcast_to": "broadcast", "cast": "convert", "negative": "neg"}
MO_COMPARISONS = {"greater": "GT", "greater_equal": "GE", "equal": "EQ", "not_equal": "NE"}


def _mo(text: str) -> list[Node]:
    nodes = [Node(name, "parameter") for name in dict.fromkeys(re.findall(r"%arg\d+\b", text))]
    for name, op, operands, constant in MO_OP.findall(text):
        node = Node(name, MO_NAMES.get(op, NAMES.get(op, op)), re.findall(r"%\w+", operands or ""))
        if op == "constant":
            node.attrs["value"] = _number(constant) if "," not in constant else None
        if op in MO_COMPARISONS:
            node.op, node.attrs["direction"] = "compare", MO_COMPARISONS[op]
        nodes.append(node)
    return nodes


# ---- XLA's optimized HLO, as text ----

COMPUTATION = re.compile(r"^(ENTRY )?(%?[\w.\-]+) \(.*?\) -> [^\n]*\{\n(.*?)^\}", re.M | re.S)
INSTRUCTION = re.compile(r"^\s*(?:ROOT )?(%?[\w.\-]+) = (\S+|\([^=]*?\)) ([a-z][\w\-]*)\((.*)$")


def _hlo(text: str) -> list[Node]:
    computations, entry = {}, None
    for match in COMPUTATION.finditer(text):
        computations[match[2]] = match[3]
        if match[1]:
            entry = match[2]
    if entry is None:
        return []
    nodes: list[Node] = []
    _hlo_computation(computations, entry, None, nodes, "", None, [0])
    return nodes


def _hlo_computation(computations, name, arguments, nodes, prefix, fusion, counter) -> str | None:
    """Append ``name``'s instructions (fusions and calls inlined); the name of its ROOT's value."""
    names, root = {}, None
    for line in computations.get(name, "").splitlines():
        match = INSTRUCTION.match(line)
        if not match:
            continue
        own, shape, opcode, rest = match[1], match[2], match[3], match[4]
        inside, after = _balanced(rest)
        named = (
            re.findall(r"%[\w.\-]+", inside)
            if "%" in inside
            else [t.split()[-1] for t in inside.split(",") if t.strip()]
        )
        operands = [names.get(o, f"{prefix}{o}") for o in named]
        target = re.search(r"\b(?:calls|to_apply)=(%?[\w.\-]+)", after)
        if opcode in ("fusion", "call") and target and target[1] in computations:
            counter[0] += 1
            inner = f"{prefix}f{counter[0]}."
            value = _hlo_computation(
                computations, target[1], operands, nodes, inner, target[1] if opcode == "fusion" else fusion, counter
            )
            names[own] = value or f"{prefix}{own}"
        elif opcode == "parameter" and arguments is not None:
            names[own] = arguments[int(inside)] if inside.strip().isdigit() and int(inside) < len(arguments) else "?"
        else:
            node = Node(f"{prefix}{own}", NAMES.get(opcode, opcode), operands, fusion=fusion)
            if opcode == "compare":
                direction = re.search(r"direction=(\w+)", after)
                node.attrs["direction"] = direction[1] if direction else "?"
            if opcode == "constant":
                node.operands, node.attrs["value"] = [], _number(inside)
            if shape.startswith("pred"):
                node.attrs["boolean"] = True
            nodes.append(node)
            names[own] = node.name
        if line.lstrip().startswith("ROOT"):
            root = names.get(own)
    return root


def _balanced(rest: str) -> tuple[str, str]:
    """(what is inside the opcode's parentheses, what follows them)."""
    depth = 1
    for i, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return rest[:i], rest[i + 1 :]
    return rest, ""


# ---- a jaxpr, as text ----


def _jaxpr(text: str) -> list[Node]:
    nodes: list[Node] = []
    parser = _JaxprText(text)
    parser.jaxpr(None, nodes, "", [0])
    return nodes


class _JaxprText:
    """A reader of ``str(jax.make_jaxpr(f)(...))``: { lambda consts ; inputs . let equations in (outputs) }."""

    def __init__(self, text: str):
        self.text, self.at = text, 0

    def jaxpr(self, arguments, nodes, prefix, counter) -> list[str]:
        self._expect("{")
        self._word("lambda")
        names: dict[str, str] = {}
        binders = self._until(".").replace(";", " ").split()
        for i, binder in enumerate(binders):
            own = binder.split(":")[0]
            if arguments is not None and i < len(arguments):
                names[own] = arguments[i]
            else:
                names[own] = f"{prefix}{own}"
                nodes.append(Node(names[own], "parameter"))
        self._word("let")
        while not self._peek_word("in"):
            self._equation(names, nodes, prefix, counter)
        self._word("in")
        outputs = self._until("}")
        return [self._atom(a, names, nodes, prefix) for a in outputs.strip().strip("()").replace(",", " ").split()]

    def _equation(self, names, nodes, prefix, counter) -> None:
        outs = self._until("=").split()
        primitive = re.match(r"\s*([\w\-]+)", self.text[self.at :])
        self.at += primitive.end()
        inner = []
        if self.text[self.at] == "[":
            inner = self._params()
        line_end = self.text.find("\n", self.at)
        line_end = len(self.text) if line_end < 0 else line_end
        args = self.text[self.at : line_end].split()
        self.at = line_end
        operands = [self._atom(a, names, nodes, prefix) for a in args]
        op = primitive[1]
        own = [o.split(":")[0] for o in outs]
        if inner:
            counter[0] += 1
            returned = _JaxprText(inner[0]).jaxpr(operands, nodes, f"{prefix}j{counter[0]}.", counter)
            for o, r in zip(own, returned):
                names[o] = r
            return
        node = Node(f"{prefix}{own[0]}" if own else f"{prefix}_", NAMES.get(op, op), operands)
        if op in COMPARISONS:
            node.op, node.attrs["direction"] = "compare", COMPARISONS[op]
        if outs and ":bool[" in outs[0]:
            node.attrs["boolean"] = True
        nodes.append(node)
        for o in own:
            names[o] = node.name

    def _params(self) -> list[str]:
        """Skip a primitive's [params]; the text of its nested jaxpr (jaxpr=, call_jaxpr=), if any."""
        depth, start, found = 0, self.at, []
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in "[{(":
                if char == "{" and depth == 1 and re.search(r"\b(?:call_)?jaxpr=$", self.text[start : self.at]):
                    end = self._closing(self.at)
                    found.append(self.text[self.at : end + 1])
                    self.at = end + 1
                    continue
                depth += 1
            elif char in "]})":
                depth -= 1
                if depth == 0:
                    self.at += 1
                    return found[:1]
            self.at += 1
        return found[:1]

    def _closing(self, at: int) -> int:
        depth = 0
        for i in range(at, len(self.text)):
            depth += {"{": 1, "}": -1}.get(self.text[i], 0)
            if depth == 0:
                return i
        return len(self.text) - 1

    def _atom(self, atom: str, names, nodes, prefix) -> str:
        if atom in names:
            return names[atom]
        value = _number(atom.split(":")[0])
        if ":" in atom or value is not None:
            name = f"{prefix}const{len(nodes)}"
            nodes.append(Node(name, "constant", attrs={"value": value}))
            return name
        return atom

    def _expect(self, char: str) -> None:
        self.at = self.text.index(char, self.at) + 1

    def _word(self, word: str) -> None:
        match = re.compile(rf"\s*{word}\b").match(self.text, self.at)
        if not match:
            raise ValueError(f"not a jaxpr: expected {word!r} at {self.text[self.at : self.at + 40]!r}")
        self.at = match.end()

    def _peek_word(self, word: str) -> bool:
        return bool(re.compile(rf"\s*{word}\b").match(self.text, self.at))

    def _until(self, char: str) -> str:
        end = self.text.index(char, self.at)
        taken, self.at = self.text[self.at : end], end + 1
        return taken
