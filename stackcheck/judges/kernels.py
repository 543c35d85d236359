"""The course's verdicts on kernels (§10-§11): a custom op's own GPU kernel, vector width, the
output types a Mojo op declares, Python that is no Mojo."""

from __future__ import annotations

import re

from stackcheck.toolchains import ir


def assert_custom_op_own_gpu_kernel(kernels: dict[str, dict], arch: str) -> dict:
    """§10.4: ``target`` is a compile-time parameter. Compiled for ``arch``, the graph holds GPU
    machine code only; the built-in ReLU fuses into a matmul kernel (FFMA and FMNMX in one
    kernel), while the custom op stays a kernel of its own: its ``foreach`` body takes the max
    (FMNMX with a false predicate, never a min) and multiplies nothing (no FFMA). A custom op is a
    boundary the compiler does not fuse."""
    wrong_target = {n: k["target"] for n, k in kernels.items() if not (k["target"] or "").startswith(arch)}
    fused = sorted(n for n, k in kernels.items() if {"FFMA", "FMNMX"} <= k["ops"])
    each = {n: k for n, k in kernels.items() if re.search(r"for_?each", n) and "FFMA" not in k["ops"]}
    custom = sorted(n for n, k in each.items() if k["fmnmx"] == {"max"})
    minimum = sorted(n for n, k in each.items() if k["fmnmx"] - {"max"})
    found = {"kernels": sorted(kernels), "relu_fused_into_matmul": fused, "custom_op_kernels": custom}
    assert kernels and not wrong_target, f"every kernel compiled for {arch}: {wrong_target or 'no kernels'}"
    assert fused, f"the built-in ReLU should fuse into a matmul kernel (FFMA and FMNMX together): {found}"
    assert custom, f"the custom op should be a foreach kernel of its own taking the max, no FFMA: {found}"
    assert not minimum, f"a foreach kernel's FMNMX takes a min, not ReLU's max(z, 0): {minimum} ({found})"
    return found


def assert_vector_width(llvm: str, function: str, width: int) -> dict[str, list[int]]:
    """§10.4: ``function`` built at ``width`` loads, compares and stores ``width``-wide float vectors,
    and no other width."""
    found = ir.llvm_vector_ops(llvm, function)
    assert all(widths == {width} for widths in found.values()), (
        f"{function} built with width={width}: expected <{width} x float> loads, max and stores; found {found}"
    )
    return {op: sorted(widths) for op, widths in found.items()}


def assert_output_type_declared(given: tuple[str, list[int]], found: dict) -> None:
    """§10.4: ``found`` maps each declared (dtype, shape) of a custom op's output to the (dtype, shape)
    the graph gave it, and "built-in relu" to a built-in op's, all for one ``given`` input. Every
    declared type is taken as written, even where it differs from the input's; the built-in op's
    follows its input."""
    declared = {k: v for k, v in found.items() if k != "built-in relu"}
    given = (given[0], list(given[1]))
    assert declared and all((k[0], list(k[1])) != given for k in declared), "declare types other than the input's"
    taken = {k: v for k, v in declared.items() if v == (k[0], list(k[1]))}
    assert taken == declared, f"the custom op's output type is what Python declared, never inferred: {found}"
    assert found["built-in relu"] == given, f"a built-in op's type follows its input: {found}"


def assert_python_is_not_mojo(python_output: str, dynamic: tuple[int, str], typed: tuple[int, str]) -> None:
    """§10.1: the source Python runs (``python_output``) fails ``mojo build`` with a type error
    (``dynamic``: exit code, messages), and its one-type version builds (``typed``)."""
    assert python_output.strip(), "the dynamic source must run as Python"
    assert dynamic[0] != 0 and "convert" in dynamic[1], (
        f"Mojo must reject the variable that changes type (exit {dynamic[0]}): {dynamic[1][-500:]}"
    )
    assert typed[0] == 0, f"the one-type version must build (exit {typed[0]}): {typed[1][-500:]}"
