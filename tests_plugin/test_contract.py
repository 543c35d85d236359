"""The surface contract's return checks (stackcheck.impl.contract, issue 52): every task of the table
refuses a return of the wrong form or of another stack's array type, naming the surface, its course
section and the type it must return; a torch surface's tensors are on the inputs' device."""

import functools
import types
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from stackcheck.impl import contract, isolation
from stackcheck.impl.contract import ARRAY, ARRAY_TYPES, SCALAR, TASKS, ReturnError
from stackcheck.impl.loader import Impl

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

pytestmark = pytest.mark.meta

KINDS = ("numpy", "torch", "jax", "max", "none")  # what a wrong leaf is: an array of a stack, or None
CONSTRAINED = [t for t in TASKS.values() if t.form is not contract.ANYTHING]


@functools.cache
def sample(kind: str, ndim: int):
    """One array of stack ``kind`` with ``ndim`` dimensions (None for "none")."""
    shape = (2,) * ndim
    if kind == "numpy":
        return np.ones(shape, np.float32)
    if kind == "torch":
        return torch.ones(shape)
    if kind == "jax":
        return jax.numpy.ones(shape)
    if kind == "max":
        graph = pytest.importorskip("max.graph")
        from max.dtype import DType

        with graph.Graph("sample", input_types=[graph.TensorType(DType.float32, shape, graph.DeviceRef.CPU())]) as g:
            return g.inputs[0].tensor
    return None


def right(form, stack):
    """A value of the form ``form`` that keeps the contract, its arrays of ``stack``."""
    if isinstance(form, tuple):
        return tuple(right(f, stack) for f in form)
    if isinstance(form, list):
        return [right(form[0], stack)] * 2
    return {ARRAY: sample(stack, 1), SCALAR: 1.5, contract.SECONDS: 0.25, contract.PATH: "study_relu"}.get(form)


def leaf_forms(form) -> list:
    """The leaves of template ``form``, in order (a list's one element standing for each of two)."""
    if isinstance(form, tuple):
        return [leaf for f in form for leaf in leaf_forms(f)]
    if isinstance(form, list):
        return leaf_forms(form[0]) * 2
    return [form]


def replaced(value, form, index: int, by):
    """``value`` with its leaf number ``index`` (in ``leaf_forms`` order) replaced by ``by``."""
    count = [0]

    def walk(value, form):
        if isinstance(form, (tuple, list)):
            forms = form if isinstance(form, tuple) else form * len(value)
            return type(value)(walk(v, f) for v, f in zip(value, forms))
        count[0] += 1
        return by if count[0] - 1 == index else value

    return walk(value, form)


def right_kind(form, task) -> str | None:
    """Which of KINDS may stand where ``form`` is: the task's stack for an array or a 0-d array."""
    return task.array if form in (ARRAY, SCALAR) else "none" if form is None else None


def must_return(task, value, *inputs):
    """What ``checked`` makes of ``value`` returned by ``task``'s function for ``inputs`` (in this
    process: a kernel function's call in a child is tests_plugin/test_isolation.py's concern)."""
    # the return-value contract alone: a kernel function's kernels are judged apart (test_kernel_source.py)
    with (
        mock.patch.object(isolation, "applies", return_value=False),
        mock.patch.object(contract, "_as_judged", lambda name, fn: fn),
    ):
        return contract.checked(task.name, lambda *args, **kwargs: value)(*inputs)


def test_every_task_says_what_it_must_return_and_only_jax_sync_takes_anything():
    """A task that returns arrays names its stack's type in what the message says it must return."""
    for task in TASKS.values():
        assert task.array is None or ARRAY_TYPES[task.array].spelled in task.returns, task
    assert [t.name for t in TASKS.values() if t not in CONSTRAINED] == ["jax_sync"], (
        "jax_sync returns the value it waited for, whatever it is; every other surface has a form"
    )


@pytest.mark.parametrize("task", CONSTRAINED, ids=lambda t: t.name)
def test_a_return_that_keeps_the_contract_passes(task):
    value = right(task.form, task.array)
    assert must_return(task, value, torch.ones(2)) is value


@given(task=st.sampled_from(CONSTRAINED), kind=st.sampled_from(KINDS), index=st.integers(0, 7))
def test_a_leaf_of_another_stack_or_none_is_refused_naming_the_surface_and_section(task, kind, index):
    """Any task × any wrong type: one leaf of a right return swapped for another stack's array (0-d
    where a scalar stands) or None is refused, e.g. numpy_forward returning a torch.Tensor (issue 52)."""
    forms = leaf_forms(task.form)
    index %= len(forms)
    assume(kind != right_kind(forms[index], task))
    wrong = sample(kind, 0 if forms[index] in (SCALAR, contract.SECONDS) else 1)
    with pytest.raises(ReturnError) as refused:
        must_return(task, replaced(right(task.form, task.array), task.form, index, wrong), torch.ones(2))
    said = str(refused.value)
    assert said.startswith(f"{task.name} returned ") and f"(course §{task.section})" in said, said
    assert task.array is None or ARRAY_TYPES[task.array].spelled in said, said
    if kind != "none":
        assert ARRAY_TYPES[kind].spelled in said.partition(";")[0], f"it names what was returned: {said}"


@pytest.mark.parametrize("task", [t for t in CONSTRAINED if t.array == "torch"], ids=lambda t: t.name)
def test_a_torch_surface_returns_its_tensors_on_the_inputs_device(task):
    on_cpu = right(task.form, "torch")
    with pytest.raises(ReturnError, match=rf"^{task.name} returned a torch.Tensor on cpu for inputs on meta; .*§"):
        must_return(task, on_cpu, torch.ones(2, device="meta"))
    linear = torch.nn.Linear(2, 3, device="meta")  # w_from_linear's input: the device of its parameters
    with pytest.raises(ReturnError, match="for inputs on meta"):
        must_return(task, on_cpu, linear)
    count = len(leaf_forms(task.form))
    on_meta = functools.reduce(
        lambda v, i: replaced(v, task.form, i, torch.ones(2, device="meta")), range(count), on_cpu
    )
    assert must_return(task, on_meta, linear) is on_meta
    if count > 1:
        one_off = replaced(on_cpu, task.form, count - 1, torch.ones(2, device="meta"))
        with pytest.raises(ReturnError, match="on meta for inputs on cpu"):
            must_return(task, one_off, torch.ones(2))


@pytest.mark.parametrize("name", sorted(n for n in TASKS if n.startswith("torch_")))
def test_a_traced_torch_surface_function_guards_nothing_of_sys_modules(name):
    """torch.compile traces the implementation's lookup of a torch function and the contract's wrapper
    around it. A lookup in sys.modules there makes Dynamo wrap all of it (1,500 modules) and guard on
    it, in every trace: 0.29 s a trace of the forward where 0.16 s is the rest (CPU machine)."""
    module = types.ModuleType("traced_surface")
    setattr(module, name, lambda *args, **kwargs: torch.relu(args[0]))
    impl = Impl(module)
    explained = torch._dynamo.explain(lambda t: getattr(impl, name)(t, t, t))(torch.ones(2, 2))
    read = sorted({g.name for g in explained.out_guards if "sys'].modules" in g.name or "sys.modules" in g.name})
    assert explained.graph_count == 1 and not read, (explained.graph_count, read)


def test_numpy_forward_returning_a_torch_tensor_fails_the_tests_it_reaches(pytester, suite_file):
    """The student's loop of issue 52: such a file passed every test it reached (11 passed)."""
    (pytester.path / "homework.py").write_text(
        "import numpy as np\nimport torch\nfrom stackcheck.impl.reference import check_operands\n\n"
        "def numpy_forward(x, w, b):\n    check_operands(x, w, b)\n"
        "    return torch.from_numpy(np.maximum(x @ w + b, 0))\n"
    )
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_1_shapes.py"), "--impl", "homework.py", "-m", "numpy", "-p", "no:cacheprovider"
    )
    assert result.parseoutcomes().get("failed"), result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(
        ["*numpy_forward returned a torch.Tensor; it must return Y: one numpy.ndarray (course §2.2)*"]
    )
