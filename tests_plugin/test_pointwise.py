"""The JAX ReLU reader (stackcheck.toolchains.pointwise, course §4.3, §9.3): in each of JAX's three
stages a ReLU is found by what it computes on the probes, however it is spelled, and a function that
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
