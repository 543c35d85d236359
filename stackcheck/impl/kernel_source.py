"""A student's Triton kernels as data, checked and launched by the judge's side (course §11.2, §11.4).

In a graded run the kernel functions (``triton_bias_relu``, ``triton_forward``) run in the
submission's worker, which records each Triton launch of the call as data (``Recorder``): the
kernel's source and the sources of the ``@triton.jit`` helpers it calls, the constants and modules
it names, the grid, each argument (a view of one of the call's arguments, a buffer the host made,
a number) and the launch options. The judge checks every source (``checked``): one function of
Triton's language, whose names are its parameters, its locals, ``triton.language`` and the recorded
helpers and constants, and whose attributes are Triton's; anything else is refused with the name
it used. The judge then has the checked kernels launched again (``replay``) in a launcher: a
sandboxed worker that never imported the submission, on the judge's own inputs. What the test
judges is what those kernels computed there. A buffer the host made crosses as its fill where it
holds one value; otherwise it starts as NaN, unless it is what the course gives the host to compute
(``triton_forward``'s A = X @ W, or a copy or transpose of an argument), which the judge computes
itself. A host cannot hand a kernel its answers.

A student's own run (``pytest --homework``, ``stackcheck watch``) does the same in its own process
(``judged_call``), so that it scores as the grader does."""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import textwrap

from stackcheck.impl import isolation

KERNEL_FUNCTIONS = frozenset({"triton_bias_relu", "triton_forward"})
BUILTINS = frozenset({"range", "min", "max", "int", "float", "bool", "abs", "len", "print"})
OPTIONS = frozenset({"num_warps", "num_stages", "num_ctas"})
LIMITS = {"kernels": 16, "launches": 64, "buffers": 32, "source": 65536, "programs": 1 << 24, "elements": 1 << 28}
NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign,
    ast.Return, ast.If, ast.IfExp, ast.For, ast.While, ast.Break, ast.Continue, ast.Pass, ast.Assert,
    ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript,
    ast.Slice, ast.Tuple, ast.List, ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del,
    ast.operator, ast.boolop, ast.cmpop, ast.unaryop, ast.expr_context,
)  # fmt: skip


class KernelRefused(TypeError):
    """A kernel function's work the judge will not build or launch; the message says what to change."""


# ---- where the kernels run: the worker, or the student's own process ----


class Recorder:
    """Every Triton launch made while it is open, as data relative to the call's ``args`` and ``kwargs``."""

    def __init__(self, args: tuple, kwargs: dict, values: bool = True):
        self.values = values  # whether a buffer the host made is kept with its values (the judge's to read)
        self.arguments = [(path, t) for path, t in _tensors_in([list(args), kwargs], ()) if not t.requires_grad]
        self.kernels: dict[str, dict] = {}
        self.launches: list[dict] = []
        self.buffers: list[dict] = []
        self.storages: list = []  # the storage of each buffer, by index

    def observe(self, kernel, args: tuple, kwargs: dict) -> None:
        with _unseen():  # the recording's own reads of the tensors are no ATen ops of the call
            self._observe(kernel, args, kwargs)

    def _observe(self, kernel, args: tuple, kwargs: dict) -> None:
        fn = _python_function(kernel)
        signature = inspect.signature(fn)
        names = list(signature.parameters)
        bound = signature.bind(*args, **{k: v for k, v in kwargs.items() if k in names})
        bound.apply_defaults()
        grid = kwargs["grid"]
        grid = grid({**bound.arguments, **kwargs}) if callable(grid) else grid
        self.launches.append(
            {
                "kernel": self._kernel(kernel),
                "grid": [int(g) for g in grid],
                "args": [self._argument(bound.arguments[n]) for n in names],
                "dtypes": [_dtype(bound.arguments[n]) for n in names],
                "options": {k: v for k, v in kwargs.items() if k in OPTIONS},
            }
        )

    def program(self, value) -> dict:
        returns = ["none"]
        if is_tensor(value):
            returns = self._tensor(value, new=False) or ["unwritten", list(value.shape), int(value.numel())]
        return {"kernels": self.kernels, "launches": self.launches, "buffers": self.buffers, "returns": returns}

    def _kernel(self, kernel) -> str:
        fn = _python_function(kernel)
        name = fn.__name__
        if name in self.kernels:
            return name
        source = _undecorated(textwrap.dedent(inspect.getsource(fn)))
        entry = {"source": source, "names": {}}
        self.kernels[name] = entry
        for used in sorted(_loaded_names(source)):
            if used in fn.__globals__:
                entry["names"][used] = self._global(fn.__globals__[used])
        return name

    def _global(self, value) -> list:
        import triton.language as tl

        if _python_function(value, None) is not None:
            return ["kernel", self._kernel(value)]
        if inspect.ismodule(value):
            return ["module", value.__name__]
        if isinstance(value, tl.constexpr):
            return ["constexpr", _number(value.value)]
        if value is None or type(value) in (bool, int, float):
            return ["value", value]
        return ["other", f"{type(value).__module__}.{type(value).__qualname__}"]

    def _argument(self, value) -> list:
        import triton.language as tl

        if is_tensor(value):
            return self._tensor(value, new=True)
        if isinstance(value, tl.constexpr):
            return ["value", _number(value.value)]
        if value is None or type(value) in (bool, int, float):
            return ["value", value]
        return ["other", f"{type(value).__module__}.{type(value).__qualname__}"]

    def _tensor(self, value, new: bool):
        import torch

        shape, strides, offset = list(value.shape), list(value.stride()), value.storage_offset()
        ptr = value.untyped_storage().data_ptr()
        for path, arg in self.arguments:
            if arg.untyped_storage().data_ptr() == ptr and arg.device == value.device and arg.dtype == value.dtype:
                return ["arg", list(path), shape, strides, offset]
        for index, storage in enumerate(self.storages):
            if storage.data_ptr() == ptr and self.buffers[index]["dtype"] == str(value.dtype).removeprefix("torch."):
                return ["buffer", index, shape, strides, offset]
        if not new:
            return None
        storage = value.untyped_storage()
        whole = torch.empty(0, dtype=value.dtype, device=value.device).set_(storage)
        self.storages.append(storage)
        self.buffers.append(
            {
                "dtype": str(value.dtype).removeprefix("torch."),
                "numel": int(whole.numel()),
                "device": str(value.device),
                "fill": _fill(whole) if self.values else None,
                "data": whole.detach().cpu() if self.values else None,  # judged by the judge (``_start``)
            }
        )
        return ["buffer", len(self.buffers) - 1, shape, strides, offset]


@contextlib.contextmanager
def recording(args: tuple, kwargs: dict):
    """A ``Recorder`` of the launches made inside, relative to the call's arguments."""
    from stackcheck.toolchains import triton_kernels

    recorder = Recorder(args, kwargs)
    with triton_kernels.observed(recorder.observe):
        yield recorder


def described(kernel, args: tuple, kwargs: dict):
    """(the checked module, the checked launch) of one launch about to be made here, for ``compiled``;
    None where its source or arguments are not what the judge checks."""
    try:
        recorder = Recorder((), {}, values=False)
        recorder.observe(kernel, args, kwargs)
        module = _checked_kernels(recorder.kernels)
        return module, _checked_launch(recorder.launches[0]["kernel"], recorder.launches[0], recorder.kernels, 1 << 30)
    except (KernelRefused, OSError, TypeError):
        return None


def judged_call(name: str, fn, *args, **kwargs):
    """A kernel function run in the student's own process as the grader runs it: its launches recorded
    and checked, the arguments' memory put back as it was, and the checked kernels launched again on
    them (their grids recorded once, as the launches of the call). Its value is the one the test
    judges; what the judge's side does here is hidden from the test's recordings of ATen ops."""
    import torch

    from stackcheck.toolchains import triton_kernels

    with _unseen():
        saved = [(m, m.clone()) for m in isolation.storage_memories(list(_tensors_in([list(args), kwargs], ())))]
    with triton_kernels.unrecorded(), recording(args, kwargs) as recorder:
        value = fn(*args, **kwargs)
    if not is_tensor(value):
        return value
    with _unseen():
        plan = checked(name, recorder.program(value), host_values(name, args))
    if plan["returns"][0] == "unwritten":  # no elements (checked): nothing a kernel computes
        return value
    with _unseen(), torch.no_grad():
        for memory, before in saved:
            memory.copy_(before)
        return launched(plan, replay(plan, args, kwargs))


def launched(plan: dict, value):
    """``value``, with the plan's launches told to the open recordings (the ``launches`` fixture)."""
    from stackcheck.toolchains import triton_kernels

    for launch in plan["launches"]:
        triton_kernels.record(tuple(launch["grid"]), launch["kernel"], (plan["module"], launch))
    return value


TRITON_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1"}  # fmt: skip


def compiled(launch, arch: int = 90):
    """The kernel of one recorded launch of a student's kernel function (a ``launches`` fixture entry),
    built from its checked source for a CUDA GPU of compute capability ``arch`` on any machine, never
    launched: ``.asm["ptx"]`` and ``.metadata`` (num_warps, shared memory). Triton's code generator
    reads the checked source; none of it runs."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if getattr(launch, "program", None) is None:
        raise KernelRefused(f"launch {tuple(launch)} of {launch.kernel} is not a kernel function's (no checked source)")
    module, spec = launch.program
    kernel = _built(module, interpreted=False)[spec["kernel"]]
    constexpr = {p.name for p in kernel.params if p.is_constexpr}
    signature, constexprs = {}, {}
    for param, arg, dtype in zip((p.name for p in kernel.params), spec["args"], spec["dtypes"]):
        if param in constexpr or arg[0] == "value" and arg[1] is None:
            signature[param], constexprs[param] = "constexpr", arg[1]
        elif arg[0] in ("arg", "buffer"):
            signature[param] = "*" + TRITON_TYPES[dtype]
        else:
            value = arg[1]
            kind = "i1" if type(value) is bool else "fp32" if type(value) is float else "i32"
            signature[param] = "i64" if kind == "i32" and not -(2**31) <= value < 2**31 else kind
    options = {"num_warps": spec["options"].get("num_warps", 4), "num_stages": spec["options"].get("num_stages", 3)}
    source = ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)


# ---- the judge ----


def checked(name: str, program, host_values) -> dict:
    """``program`` (a Recorder's, as the worker sent it) checked: the module of its kernels as the judge
    writes it, its launches, its buffers with the values they start with. ``host_values`` are the
    judge's own (name, tensor) candidates for a buffer the host computed."""
    if not isinstance(program, dict):
        raise KernelRefused(f"{name}: its launches did not come back as data")
    kernels = _plain(program.get("kernels"))
    launches, buffers, returns = program.get("launches"), program.get("buffers"), program.get("returns")
    if not isinstance(launches, list) or not isinstance(buffers, list) or len(launches) > LIMITS["launches"]:
        raise KernelRefused(f"{name}: at most {LIMITS['launches']} launches a call")
    if len(buffers) > LIMITS["buffers"]:
        raise KernelRefused(f"{name}: at most {LIMITS['buffers']} buffers made by the host a call")
    text = _checked_kernels(kernels)
    plan = [_checked_launch(name, launch, kernels, len(buffers)) for launch in launches]
    read = _buffers_read(plan, kernels)
    starts = [_start(name, buffer, host_values, i in read) for i, buffer in enumerate(buffers)]
    value = _location(returns, len(buffers))
    if value[0] == "unwritten" and value[2] > 0:
        raise KernelRefused(
            f"{name} returned {tuple(value[1])} values that no Triton kernel it launched wrote: the course "
            "asks for a @triton.jit kernel that computes them (§11.2)"
        )
    return {"module": text, "launches": plan, "buffers": starts, "returns": value}


def _plain(kernels) -> dict:
    if not isinstance(kernels, dict) or len(kernels) > LIMITS["kernels"]:
        raise KernelRefused(f"a call launches at most {LIMITS['kernels']} distinct @triton.jit functions")
    return kernels


def _checked_kernels(kernels: dict) -> str:
    """The module the judge builds from ``kernels``: each function checked, decorated by the judge."""
    import triton.language as tl

    head, bodies, modules = ["import importlib", "import triton", "import triton.language"], [], {}
    constants, aliases, meaning = [], [], {}
    for name, entry in sorted(kernels.items()):
        if not (isinstance(name, str) and name.isidentifier() and isinstance(entry, dict)):
            raise KernelRefused("a kernel entry that is not a named function")
        source, names = entry.get("source"), entry.get("names")
        if not isinstance(source, str) or len(source) > LIMITS["source"] or not isinstance(names, dict):
            raise KernelRefused(f"kernel {name}: its source did not come back as text of at most 64 KB")
        scope = {}
        for used, what in names.items():
            if not (isinstance(used, str) and used.isidentifier() and isinstance(what, list) and what):
                raise KernelRefused(f"kernel {name}: a name it uses came back malformed")
            kind = what[0]
            if kind == "module" and _triton_module(what[1]):
                modules[used] = what[1]
                scope[used] = ("module", what[1])
            elif kind == "kernel" and what[1] in kernels:
                scope[used] = ("kernel", what[1])
            elif kind in ("constexpr", "value") and _is_number(what[1]):
                scope[used] = (kind, what[1])
            else:
                shown = what[1] if len(what) > 1 else kind
                raise KernelRefused(
                    f"kernel {name} uses {used} ({shown}): a Triton kernel may name triton.language, "
                    "other @triton.jit functions and number constants only"
                )
        for used, what in scope.items():
            if meaning.setdefault(used, what) != what:
                raise KernelRefused(f"two kernels mean different things by {used}; name one of them otherwise")
        bodies.append(_checked_function(name, source, scope, tl))
    for used, (kind, what) in sorted(meaning.items()):
        if kind == "kernel" and used != what:
            aliases.append(f"{used} = {what}")
        elif kind in ("constexpr", "value"):
            literal = _literal(what)
            value = f"triton.language.constexpr({literal})" if kind == "constexpr" else literal
            constants.append(f"{used} = {value}")
    for used, module in sorted(modules.items()):
        head.append(f"{used} = importlib.import_module({module!r})")
    return "\n".join(head + constants) + "\n\n\n" + "\n\n\n".join(bodies) + "\n\n" + "\n".join(aliases) + "\n"


def _checked_function(name: str, source: str, scope: dict, tl) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise KernelRefused(f"kernel {name}: its source does not parse: {error}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise KernelRefused(f"kernel {name}: its source is not the one function {name}")
    function = tree.body[0]
    function.decorator_list, function.returns = [], None
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    if function.args.vararg or function.args.kwarg:
        raise KernelRefused(f"kernel {name}: *args and **kwargs are not Triton's language")
    local = {t.id for node in ast.walk(function) for t in _targets(node)}
    known = params | local | set(scope) | BUILTINS
    for node in ast.walk(function):
        where = f"kernel {name}, line {getattr(node, 'lineno', '?')}"
        if node is not function and isinstance(node, ast.FunctionDef) or not isinstance(node, NODES):
            raise KernelRefused(f"{where}: {type(node).__name__} is not part of Triton's language")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            raise KernelRefused(f"{where}: {node.id} is not defined in the kernel, nor a Triton name")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in scope:
            raise KernelRefused(f"{where}: {node.id} names a global the kernel reads; use another name")
        if isinstance(node, ast.Attribute):
            _check_attribute(node, where, scope, tl)
    return "@triton.jit\n" + ast.unparse(function)


def _targets(node):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node


def _check_attribute(node: ast.Attribute, where: str, scope: dict, tl) -> None:
    if node.attr.startswith("_"):
        raise KernelRefused(f"{where}: .{node.attr} is not Triton's language")
    chain, base = [node.attr], node.value
    while isinstance(base, ast.Attribute):
        chain.insert(0, base.attr)
        base = base.value
    if isinstance(base, ast.Name) and scope.get(base.id, ("",))[0] == "module":
        _resolve(scope[base.id][1], chain, where)
    elif node.attr not in _tensor_attributes(tl):
        raise KernelRefused(f"{where}: .{node.attr} is not an attribute of a Triton tensor or dtype")


def _resolve(module: str, chain: list[str], where: str) -> None:
    """``module.a.b...`` must stay inside triton.language: no step may leave it (``tl.core.builtins``)."""
    import importlib

    value = importlib.import_module(module)
    for i, attr in enumerate(chain):
        value = getattr(value, attr, None)
        spelled = ".".join([module, *chain[: i + 1]])
        origin = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
        if isinstance(value, type) or inspect.ismodule(value) or callable(value):
            ok = isinstance(origin, str) and (origin == "triton.language" or origin.startswith("triton.language."))
        else:
            ok = value is not None and type(value).__module__.startswith("triton.language")
        if not ok:
            raise KernelRefused(f"{where}: {spelled} is not part of triton.language")


def _tensor_attributes(tl) -> frozenset:
    kinds = (tl.tensor, tl.dtype, tl.pointer_type, tl.block_type, tl.constexpr)
    public = {n for kind in kinds for n in dir(kind) if not n.startswith("_")}
    return frozenset((public | {"shape", "dtype", "numel", "type", "element_ty", "value"}) - {"handle"})


def _triton_module(name) -> bool:
    """triton.language and its modules; ``triton`` itself, whose attributes must lead back into it."""
    return isinstance(name, str) and (name in ("triton", "triton.language") or name.startswith("triton.language."))


def _checked_launch(name: str, launch, kernels: dict, buffers: int) -> dict:
    if not isinstance(launch, dict) or launch.get("kernel") not in kernels:
        raise KernelRefused(f"{name}: a launch of a kernel whose source did not come back")
    grid, options = launch.get("grid"), launch.get("options")
    if not (isinstance(grid, list) and 1 <= len(grid) <= 3 and all(type(g) is int and g >= 0 for g in grid)):
        raise KernelRefused(f"{name}: a grid of one to three sizes, each a whole number >= 0; launched {grid!r}")
    if math.prod(grid) > LIMITS["programs"]:
        raise KernelRefused(f"{name}: a grid of {math.prod(grid)} programs; at most {LIMITS['programs']}")
    if not isinstance(options, dict) or not all(k in OPTIONS and type(v) is int for k, v in options.items()):
        raise KernelRefused(f"{name}: launch options other than {sorted(OPTIONS)} (whole numbers): {options!r}")
    args, dtypes = launch.get("args"), launch.get("dtypes")
    if not isinstance(args, list) or not isinstance(dtypes, list) or len(dtypes) != len(args):
        raise KernelRefused(f"{name}: a launch whose arguments did not come back")
    if not all(d is None or d in _DTYPES for d in dtypes):
        raise KernelRefused(f"{name}: a tensor of a dtype the judge does not pass to kernels: {dtypes}")
    for arg in args:
        if _location(arg, buffers)[0] == "other" or (arg[0] == "value" and not _is_number(arg[1])):
            raise KernelRefused(
                f"{name} passes a {arg[1] if len(arg) > 1 else arg} to kernel {launch['kernel']}: the judge passes "
                "tensors, numbers and constexprs only"
            )
    return {"kernel": launch["kernel"], "grid": grid, "args": args, "dtypes": dtypes, "options": options}


_NODES = ("arg", "buffer", "value", "none", "unwritten", "other")


def _location(node, buffers: int) -> list:
    """A checked argument or return node: ["arg", path, shape, strides, offset], ["buffer", i, ...], a value."""
    if not isinstance(node, list) or not node or node[0] not in _NODES:
        raise KernelRefused(f"a kernel argument that came back malformed: {str(node)[:80]}")
    if node[0] in ("arg", "buffer"):
        ok = len(node) == 5 and all(isinstance(x, list) for x in node[2:4]) and type(node[4]) is int
        ok = ok and all(type(x) is int for x in (*node[2], *node[3]))
        if node[0] == "buffer":
            ok = ok and type(node[1]) is int and 0 <= node[1] < buffers
        else:
            ok = ok and isinstance(node[1], list) and all(type(p) in (int, str) for p in node[1])
        if not ok:
            raise KernelRefused(f"a tensor of a launch that came back malformed: {str(node)[:80]}")
    if node[0] == "unwritten" and not (len(node) == 3 and type(node[2]) is int):
        raise KernelRefused("a returned tensor that came back malformed")
    return node


def _start(name: str, buffer, host_values, read: bool) -> dict:
    """What a buffer the host made starts as in the launcher: the judge's own value of what the course
    gives the host to compute (A = X @ W, a copy of an argument); its one value where a kernel reads it
    (zeros to accumulate into); else NaN (the largest value for integers), whatever its memory held."""
    import torch

    if not isinstance(buffer, dict) or buffer.get("dtype") not in _DTYPES:
        raise KernelRefused(f"{name}: a buffer the host made of a dtype the judge does not pass to kernels")
    numel, device, fill = buffer.get("numel"), buffer.get("device"), buffer.get("fill")
    if type(numel) is not int or not 0 <= numel <= LIMITS["elements"] or not isinstance(device, str):
        raise KernelRefused(f"{name}: a buffer the host made of {numel!r} elements; at most {LIMITS['elements']}")
    dtype = getattr(torch, buffer["dtype"])
    start = {"dtype": buffer["dtype"], "numel": numel, "device": device, "fill": None, "value": None}
    data = buffer.get("data")
    if _is_number(fill) and fill is not None and read:
        start["fill"] = fill
    elif is_tensor(data) and data.numel() == numel:
        for _, candidate, k in host_values:
            flat = candidate.detach().to(dtype).contiguous().reshape(-1)
            if flat.numel() == numel and _close(data, flat, k):
                start["value"] = flat
                break
    if start["fill"] is None and start["value"] is None:
        start["fill"] = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).max
    return start


def _buffers_read(plan: list, kernels: dict) -> set[int]:
    """The host's buffers some launch passes to a parameter its kernel reads from (a load, an atomic,
    a block pointer, or a helper kernel given it), through any local it derives."""
    read = set()
    for launch in plan:
        function = ast.parse(kernels[launch["kernel"]]["source"]).body[0]
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)]
        reads = _reads(function, set(params))
        read |= {arg[1] for param, arg in zip(params, launch["args"]) if arg[0] == "buffer" and param in reads}
    return read


def _reads(function: ast.FunctionDef, params: set[str]) -> set[str]:
    derived: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    derived.setdefault(name, set()).update(used)

    def roots(name: str, seen: set) -> set[str]:
        if name in params:
            return {name}
        seen.add(name)
        return set().union(*(roots(d, seen) for d in derived.get(name, ()) if d not in seen))

    found = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if called == "load" or called.startswith("atomic_") or called in ("make_block_ptr", "make_tensor_descriptor"):
            exprs = node.args[:1] + [k.value for k in node.keywords if k.arg in ("pointer", "base")]
        elif isinstance(node.func, ast.Name):  # a helper kernel: what it is given may be read
            exprs = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        for expression in exprs:
            for n in ast.walk(expression):
                if isinstance(n, ast.Name):
                    found |= roots(n.id, set())
    return found


_DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


def _close(data, flat, k: int) -> bool:
    """A host buffer is the judge's candidate value where the tolerance policy says they agree (floats),
    or where they are equal (integers)."""
    from stackcheck.evidence.numerics import tolerance

    a, b = data.cpu(), flat.cpu()
    if not flat.is_floating_point():
        return bool((a == b).all())
    tol = tolerance(str(flat.dtype).removeprefix("torch."), k=k)
    a, b = a.double(), b.double()
    return bool(((a - b).abs() <= tol.atol + tol.rtol * b.abs()).all())


def host_values(name: str, args: tuple) -> list:
    """The judge's own values for buffers the host computes, (what, value, k of its tolerance): each
    floating-point argument, its transpose, and for ``triton_forward`` the course's A = X @ W
    (§11.4: torch's matmul, then the kernel)."""
    tensors = [a for a in args if is_tensor(a) and a.dtype.is_floating_point]
    values = [("argument", t, 1) for t in tensors] + [("transpose", t.T, 1) for t in tensors if t.dim() == 2]
    if name == "triton_forward" and len(tensors) >= 2 and tensors[0].dim() == tensors[1].dim() == 2:
        x, w = tensors[0], tensors[1]
        if x.shape[1] == w.shape[0] and x.dtype == w.dtype:
            values.insert(0, ("X @ W", x @ w, x.shape[1]))
    return values


# ---- the launcher: a worker that never imported the submission ----

_BUILT: dict[tuple[str, bool], dict] = {}


def replay(plan: dict, args: tuple, kwargs: dict):
    """The judge's checked ``plan`` launched on ``args`` and ``kwargs``: the value the call returns."""
    import torch

    arguments = dict(_tensors_in([list(args), kwargs], ()))
    buffers = []
    for b in plan["buffers"]:
        dtype, device = getattr(torch, b["dtype"]), torch.device(b["device"])
        if b["value"] is not None:
            buffers.append(b["value"].to(device=device, dtype=dtype).clone())
        else:
            buffers.append(torch.full((b["numel"],), b["fill"], dtype=dtype, device=device))
    tensors = [t for t in (*arguments.values(), *buffers)]
    interpreted = bool(tensors) and all(t.device.type == "cpu" for t in tensors)
    kernels = _built(plan["module"], interpreted)
    from stackcheck.toolchains import triton_kernels

    with triton_kernels.unrecorded():
        for launch in plan["launches"]:
            values = [_value(arg, arguments, buffers) for arg in launch["args"]]
            kernels[launch["kernel"]][tuple(launch["grid"])](*values, **launch["options"])
    return _value(plan["returns"], arguments, buffers)


def _value(node, arguments: dict, buffers: list):
    import torch

    if node[0] == "value":
        return node[1]
    base = arguments[tuple(node[1])] if node[0] == "arg" else buffers[node[1]]
    return torch.as_strided(base, node[2], node[3], node[4])  # torch checks the storage's bounds


def _built(module: str, interpreted: bool) -> dict:
    """The judge's module text compiled here once (per launch mode): its kernels by name. It is
    compiled from memory, its lines in ``linecache`` under a name no file has (Triton reads a
    kernel's source through ``inspect``), so nothing is written to disk or left behind."""
    import linecache
    import types

    from stackcheck.toolchains.triton_kernels import interpreter

    key = (module, interpreted)
    if key not in _BUILT:
        name = f"judged_kernels_{len(_BUILT)}"
        filename = f"<stackcheck {name}>"
        linecache.cache[filename] = (len(module), None, module.splitlines(keepends=True), filename)
        loaded = types.ModuleType(name)
        loaded.__file__ = filename
        with interpreter(interpreted):
            exec(compile(module, filename, "exec"), vars(loaded))
        _BUILT[key] = {n: v for n, v in vars(loaded).items() if _python_function(v, None) is not None}
    return _BUILT[key]


# ---- small helpers ----


def _python_function(kernel, default=KeyError):
    """The Python function of a Triton kernel (JITFunction, InterpretedFunction, the suite's EitherDevice)."""
    from stackcheck.toolchains.triton_kernels import EitherDevice

    if isinstance(kernel, EitherDevice):
        kernel = kernel.compiled
    kind = type(kernel)
    if kind.__module__.startswith("triton.runtime") and kind.__name__ in ("JITFunction", "InterpretedFunction"):
        return kernel.fn
    if default is KeyError:
        raise KernelRefused(f"not a Triton kernel: {kind.__qualname__}")
    return default


def _undecorated(source: str) -> str:
    """A function's source from its ``def`` line (its decorators are the launcher's to write)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    first = tree.body[0] if tree.body else None
    if not isinstance(first, ast.FunctionDef):
        return source
    return "\n".join(source.splitlines()[first.lineno - 1 :]) + "\n"


def _loaded_names(source: str) -> set[str]:
    """The names a kernel's source reads (its globals among them; a builtin is one only if shadowed)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _tensors_in(value, path):
    if is_tensor(value):
        yield path, value
    elif type(value) in (list, tuple):
        for i, v in enumerate(value):
            yield from _tensors_in(v, (*path, i))
    elif type(value) is dict:
        for k, v in value.items():
            if isinstance(k, str):
                yield from _tensors_in(v, (*path, k))


def _unseen():
    """A block whose torch ops no dispatch mode records (the eager-ops recordings of a test): the judge's
    side of a call is not the call's work."""
    import sys

    if "torch" not in sys.modules:
        return contextlib.nullcontext()
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


def _dtype(value) -> str | None:
    return str(value.dtype).removeprefix("torch.") if is_tensor(value) else None


def is_tensor(value) -> bool:
    """A torch tensor, told without importing torch."""
    kind = type(value)
    return kind.__module__.startswith("torch") and kind.__name__ in ("Tensor", "Parameter")


def _is_number(value) -> bool:
    return value is None or type(value) in (bool, int, float)


def _number(value):
    return value if _is_number(value) else ["other", type(value).__qualname__]


def _fill(whole):
    """The one value every element of ``whole`` holds (NaN counts as one value), else None."""
    if whole.numel() == 0:
        return None
    first = whole.reshape(-1)[:1]
    same = (whole == first) | (whole.isnan() & first.isnan()) if whole.is_floating_point() else whole == first
    return first.item() if bool(same.all()) else None


def _literal(value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)
