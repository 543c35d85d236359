"""§5.4 and §9.3: "버전과 backend에 따라 연산 이름, 출력 형식, 가용성이 달라질 수 있다". The course's own
§9.3 listing, run on the CPU under the installed JAX and under an older one (fetched once into the
suite's cache): the op families and Y agree, and the names differ (the jaxpr's nested call is `pjit`
before JAX 0.7 and `jit` after; the compiled HLO names its instructions differently)."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import jax_versions

NEWER_FROM = (0, 7)  # the rename the comparison rests on: JAX 0.7 prints a nested jit as `jit`


@pytest.mark.claim("S9.3-version-names")
@pytest.mark.parametrize("device", device_params("jax", devices=("cpu",)))
def test_op_names_vary_with_the_jax_version_and_the_meaning_does_not(device, hand_example, tmp_path, evidence):
    jax = need("jax")
    pytest.importorskip(
        "sybil", reason="the course's listings are read with Sybil (pip install sybil)", exc_type=ImportError
    )
    from stackcheck.course import listings
    from stackcheck.course.printed import tokens

    installed = tuple(int(p) for p in jax.__version__.split(".")[:2])
    if installed < NEWER_FROM:
        pytest.skip(f"JAX {jax.__version__} predates the rename this compares with {jax_versions.OLDER}: use JAX 0.7+")
    (listing,) = [
        one
        for one in listings.listings_of(listings.sybil().parse(listings.shipped()))
        if one.section == "9.3" and one.language == "python"
    ]
    try:
        older = jax_versions.older_jax()
    except RuntimeError as e:
        pytest.skip(
            f"JAX {jax_versions.OLDER} could not be fetched ({e}); with an index: pip install jax=={jax_versions.OLDER}"
        )
    printed = [jax_versions.run_listing(listing.source, tmp_path, device, first) for first in (older, None)]
    runs = [jax_versions.parts(text) for text in printed]
    assert [r["version"] for r in runs] == [jax_versions.OLDER, jax.__version__], "each run must use its own JAX"
    for run in runs:
        y = [t for t in tokens(run["y"]) if isinstance(t, float)]
        assert_matches_reference(
            y, hand_example["y"].ravel(), dtype="float32", k=3, what=f"Y printed under JAX {run['version']}"
        )
    evidence(versions=[r["version"] for r in runs], **judges.assert_names_vary_meaning_stays(*runs))
