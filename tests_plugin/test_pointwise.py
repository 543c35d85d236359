"""The ReLU reader (stackcheck.toolchains.pointwise, course §4.3, §9.3, §12.1): in each of JAX's three
stages and in a MAX graph a ReLU is found by what it computes on the probes, however it is spelled, and a function that
differs from max(z, 0) anywhere on them (NaN dropped, a leak, another threshold, |z|) is no ReLU."""

import pytest

from stackcheck.toolchains import pointwise

pytestmark = pytest.mark.meta
jax = pytest.importorskip("jax")
jnp, lax = jax.numpy, jax.lax

RELUS = {
    "max": lambda z: jnp.maximum(z, 0),
    "lax.max": lambda z: lax.max(z, jnp.zeros_like(z)),
    "nn.relu": jax.nn.relu,
    "clip": lambda z: jnp.clip(z, 0),
    "where": lambda z: jnp.where(z < 0, 0.0, z),
    "where-le": lambda z: jnp.where(z <= 0, 0.0, z),
    "select": lambda z: lax.select(z < 0, jnp.zeros_like(z), z),
    "clamp": lambda z: lax.clamp(0.0, z, jnp.inf),
}
NOT_RELUS = {
    "nan-dropping": lambda z: jnp.where(z > 0, z, 0.0),
    "abs": jnp.abs,
    "leaky": lambda z: jax.nn.leaky_relu(z, 0.01),
    "threshold-1": lambda z: jnp.maximum(z, 1.0),
    "min": lambda z: jnp.minimum(z, 0),
    "mask-multiply": lambda z: z * (z > 0),
}


def stages(relu):
    x, w, b = jnp.ones((4, 3)), jnp.ones((3, 5)), jnp.ones((5,))

    def forward(x, w, b):
        return relu(x @ w + b)

    lowered = jax.jit(forward).lower(x, w, b)
    return {
        "jaxpr": str(jax.make_jaxpr(forward)(x, w, b)),
        "stablehlo": lowered.as_text(),
        "hlo": lowered.compile().as_text(),
    }


@pytest.mark.parametrize("form", ["jaxpr", "stablehlo", "hlo"])
@pytest.mark.parametrize("spelling", sorted(RELUS))
def test_every_relu_spelling_reads_as_one_relu_after_the_add(spelling, form):
    families = pointwise.families(stages(RELUS[spelling])[form], form)
    assert families.count("relu") == 1 and families.index("add") < families.index("relu"), families


@pytest.mark.parametrize("form", ["jaxpr", "stablehlo", "hlo"])
@pytest.mark.parametrize("spelling", sorted(NOT_RELUS))
def test_what_differs_from_relu_on_a_probe_is_no_relu(spelling, form):
    assert "relu" not in pointwise.families(stages(NOT_RELUS[spelling])[form], form)


def test_the_fusion_holding_add_and_relu_is_found_whatever_spells_the_relu():
    for spelling in ("max", "where", "clip"):
        assert len(pointwise.fusions_holding(stages(RELUS[spelling])["hlo"], {"add", "relu"})) == 1, spelling


def max_graph_text(relu) -> str:
    """A MAX graph of ReLU(X @ W + b) with ``relu`` spelled by max.graph's ops, as its mo text."""
    pytest.importorskip("max.graph")
    from max.driver import CPU
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, ops

    ref = DeviceRef.from_device(CPU())
    types = [TensorType(DType.float32, dims, device=ref) for dims in (["N", "K"], ["K", "M"], ["M"])]
    with Graph("spelled", input_types=types) as graph:
        x, w, b = (v.tensor for v in graph.inputs)
        graph.output(relu(ops, ops.matmul(x, w) + b))
    return str(graph)


MAX_RELUS = {
    "relu": lambda ops, z: ops.relu(z),
    "max": lambda ops, z: ops.max(z, 0),
    "max-constant": lambda ops, z: ops.max(z, ops.constant(0.0, z.dtype, device=z.device)),
    "cast-relu-cast": lambda ops, z: ops.cast(ops.relu(ops.cast(z, z.dtype)), z.dtype),
}
MAX_NOT_RELUS = {
    "nan-dropping": lambda ops, z: ops.where(z > 0, z, 0.0),
    "where-lt": lambda ops, z: ops.where(z < 0, 0.0, z),  # mo spells z < 0 as not(z >= 0): NaN selects 0
    "abs": lambda ops, z: ops.abs(z),
    "threshold-1": lambda ops, z: ops.max(z, 1.0),
    "min": lambda ops, z: ops.min(z, 0),
}


@pytest.mark.parametrize("spelling", sorted(MAX_RELUS))
def test_every_max_relu_spelling_reads_as_one_relu_after_the_add(spelling):
    families = pointwise.families(max_graph_text(MAX_RELUS[spelling]), "mo")
    assert families[:2] == ["matmul", "add"] and families.count("relu") == 1 and families[-1] == "relu", families


@pytest.mark.parametrize("spelling", sorted(MAX_NOT_RELUS))
def test_what_differs_from_relu_on_a_probe_is_no_relu_in_a_max_graph(spelling):
    assert "relu" not in pointwise.families(max_graph_text(MAX_NOT_RELUS[spelling]), "mo")
