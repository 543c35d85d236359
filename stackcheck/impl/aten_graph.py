"""A torch function's core ATen graph as data (course §8.3: torch.export records ATen ops), so that a
graded submission's graph is run by the judge, not by the code that made it.

The worker exports the student's function (``torch.export`` decomposed to core ATen) and sends
``dump``'s data: inputs, nodes (an op's name and its arguments) and the output; constants as arrays.
The judge rebuilds it with ``rebuild``: every op must be a core ATen operator (``torch.Tag.core``),
looked up by name in ``torch.ops.aten``, and every argument a node, a number, a list, or a dtype,
device, layout or memory format named from a fixed set; nothing the worker sent is ever executed as
code. No pickle is read (``torch.export.load`` unpickles: never for untrusted data)."""

from __future__ import annotations

import operator
import re

OP = re.compile(r"aten\.(\w+)\.(\w+)")
MEMORY_FORMATS = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


class GraphRefused(ValueError):
    """The worker's graph holds something the judge does not run (a non-core op, an argument of an
    unknown kind)."""


def dump(fn, *args) -> dict:
    """``fn``'s core ATen graph for ``args`` as data (run where ``fn`` lives)."""
    import torch

    class Forward(torch.nn.Module):
        def forward(self, *inputs):
            return fn(*inputs)

    program = torch.export.export(Forward(), tuple(args)).run_decompositions()
    names, inputs = {}, []
    for spec in program.graph_signature.input_specs:
        names[spec.arg.name] = len(names)
        if spec.kind.name == "USER_INPUT":
            inputs.append(["user", len([i for i in inputs if i[0] == "user"])])
        else:
            value = (program.constants | program.state_dict)[spec.target]
            inputs.append(["constant", value.detach().cpu().contiguous().numpy()])
    nodes, output = [], None
    for node in program.graph.nodes:
        if node.op == "call_function":
            names[node.name] = len(inputs) + len(nodes)
            target = "getitem" if node.target is operator.getitem else str(node.target)
            nodes.append([target, _arg(node.args, names), {k: _arg(v, names) for k, v in node.kwargs.items()}])
        elif node.op == "output":  # a tuple of results; one result (a forward's Y) as itself
            results = node.args[0]
            output = _arg(results[0] if len(results) == 1 else results, names)
    return {"inputs": inputs, "nodes": nodes, "output": output}


def _arg(value, names: dict):
    import torch

    if isinstance(value, torch.fx.Node):
        return ["node", names[value.name]]
    if isinstance(value, (list, tuple)):
        return ["list", [_arg(v, names) for v in value]]
    if value is None or isinstance(value, (bool, int, float)):
        return ["value", value]
    if isinstance(value, torch.dtype):
        return ["dtype", str(value).removeprefix("torch.")]
    if isinstance(value, torch.device):
        return ["device", value.type]
    if isinstance(value, torch.layout):
        return ["layout", str(value).removeprefix("torch.")]
    if isinstance(value, torch.memory_format):
        return ["memory_format", str(value).removeprefix("torch.")]
    raise GraphRefused(f"an argument of kind {type(value).__name__} in the exported graph")


def rebuild(data, device):
    """The judge's own ``torch.fx.GraphModule`` for ``dump``'s data, its constants on ``device``;
    GraphRefused where the data is not a graph of core ATen ops."""
    import numpy as np
    import torch

    try:
        inputs, nodes, output = data["inputs"], data["nodes"], data["output"]
    except (TypeError, KeyError) as error:
        raise GraphRefused(f"not an exported graph ({error})") from None
    root, graph, made = torch.nn.Module(), torch.fx.Graph(), []
    for i, entry in enumerate(_list(inputs)):
        kind, value = _pair(entry)
        if kind == "user" and isinstance(value, int):
            made.append(graph.placeholder(f"input_{value}"))
        elif kind == "constant" and isinstance(value, np.ndarray):
            root.register_buffer(f"constant_{i}", torch.from_numpy(value.copy()).to(device))
            made.append(graph.get_attr(f"constant_{i}"))
        else:
            raise GraphRefused(f"input {i} is neither an argument nor an array")
    for entry in _list(nodes):
        if not isinstance(entry, list) or len(entry) != 3 or not isinstance(entry[2], dict):
            raise GraphRefused("a node that is not [op, args, kwargs]")
        target, args, kwargs = entry
        made.append(
            graph.call_function(
                _op(target), tuple(_value(args, made)), {str(k): _value(v, made) for k, v in kwargs.items()}
            )
        )
    graph.output(_value(output, made))
    return torch.fx.GraphModule(root, graph)


def _op(target):
    import torch

    if target == "getitem":
        return operator.getitem
    found = OP.fullmatch(target) if isinstance(target, str) else None
    op = getattr(getattr(torch.ops.aten, found[1], None), found[2], None) if found else None
    if not isinstance(op, torch._ops.OpOverload) or torch.Tag.core not in op.tags:
        raise GraphRefused(f"{target!r} is not a core ATen operator")
    return op


def _value(value, made: list):
    import torch

    kind, item = _pair(value)
    if kind == "node" and isinstance(item, int) and 0 <= item < len(made):
        return made[item]
    if kind == "list" and isinstance(item, list):
        return [_value(v, made) for v in item]
    if kind == "value" and (item is None or isinstance(item, (bool, int, float))):
        return item
    if kind == "dtype" and isinstance(getattr(torch, str(item), None), torch.dtype):
        return getattr(torch, item)
    if kind == "device" and item in ("cpu", "cuda"):
        return torch.device(item, 0) if item == "cuda" else torch.device(item)
    if kind == "layout" and item == "strided":
        return torch.strided
    if kind == "memory_format" and item in MEMORY_FORMATS:
        return getattr(torch, item)
    raise GraphRefused(f"an argument the judge does not accept: {str(value)[:200]}")


def _list(value) -> list:
    if not isinstance(value, list):
        raise GraphRefused("not a list where the graph has one")
    return value


def _pair(value) -> tuple:
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str):
        raise GraphRefused(f"not a tagged value: {str(value)[:200]}")
    return value[0], value[1]
