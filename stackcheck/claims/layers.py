"""Course §12.1's comparison table as data: for each stack, the component at each layer, and where
the installed stack exposes it. Q4 and MC11 check the table against what each stack really offers."""

from __future__ import annotations

import importlib

# layer -> (the course's component, "module:attribute" the installed stack exposes it as)
LAYERS = {
    "torch": {
        "capture": ("Dynamo", "torch._dynamo:optimize"),
        "high-level IR": ("FX / ATen", "torch.fx:GraphModule"),
        "compiler": ("Inductor", "torch._inductor.compile_fx:compile_fx"),
        "kernel language": ("Triton", "triton:jit"),
        "device runtime": ("PyTorch runtime", "torch.cuda:Stream"),
    },
    "jax": {
        "capture": ("tracing / Jaxpr", "jax:make_jaxpr"),
        "high-level IR": ("StableHLO", "jax.stages:Lowered"),
        "compiler": ("XLA", "jax.stages:Compiled"),
        "kernel language": ("Pallas", "jax.experimental.pallas:pallas_call"),
        "device runtime": ("PJRT", "jax:devices"),
    },
    "max": {
        "capture": ("symbolic graph construction", "max.graph:Graph"),
        "high-level IR": ("MAX Graph (MO)", "max.graph:Graph"),
        "compiler": ("MAX compile path", "max.engine:InferenceSession"),
        "device runtime": ("MAX runtime", "max.driver:CPU"),
    },
    "mojo": {"kernel language": ("Mojo", None)},  # a language: its compiler is the `mojo` command
}


def component_layer(component: str) -> list[str]:
    """Every layer the table puts ``component`` at (any stack)."""
    return [layer for row in LAYERS.values() for layer, (name, _) in row.items() if component in name.split(" / ")]


def exposed(where: str | None):
    """The object ``module:attribute`` names (ImportError / AttributeError when the stack lacks it)."""
    if where is None:
        raise LookupError("a language: nothing to import")
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)


def assert_key_matches(key: dict[str, str]) -> None:
    """Checkpoint 4's answer key (component -> layer) agrees with the table, component by component."""
    wrong = {
        component: (layer, component_layer(component))
        for component, layer in key.items()
        if component_layer(component) != [layer]
    }
    assert not wrong, f"the key puts these components where §12.1's table does not (key, table): {wrong}"
