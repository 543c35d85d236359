"""JAX's MLIR bindings, for reading StableHLO with MLIR's own parser (course §9.3)."""


def xla_mlir():
    """(context, ir module) of JAX's MLIR bindings. They are private: when they move, the caller's
    test is skipped naming the JAX version, not errored."""
    import importlib

    import jax
    import pytest

    try:
        mlir = importlib.import_module("jax._src.interpreters.mlir")
        mlir_ir = importlib.import_module("jax._src.lib.mlir").ir
        return mlir.make_ir_context(), mlir_ir
    except (ImportError, AttributeError) as error:
        where = "stackcheck.toolchains.mlir_context.xla_mlir"
        pytest.skip(f"JAX {jax.__version__} moved its MLIR context ({error}); update {where}")
