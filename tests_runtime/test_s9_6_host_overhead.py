"""§9.6: "이 예제는 이해하기 쉬운 작은 입력을 사용하므로 host overhead 비중이 클 수 있다." The course's
compiled line, timed as §9.6 times it (each call waited for), on its 2 x 3 example and on a matmul big
enough to be work: at the rate the big call computes, the small call's work is a sliver of its time;
the rest is host overhead."""

import pytest

from stackcheck import judges
from stackcheck.evidence import timing
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out

SMALL = (2, 3, 2)  # the course's X[2, 3] @ W[3, 2]
LARGE = {"cpu": 1024, "cuda": 4096}  # N = K = M where a call is mostly work (about 5 ms each, measured)
LEAST = 0.5  # measured: 0.9999 on this 2-core CPU; a call at an eighth of the large size reads about 0.06


@pytest.mark.claim("S9.6-host-overhead")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu", "cuda")))
def test_a_small_call_is_mostly_host_overhead(evidence, stack, device):
    jax = need("jax")
    line = jax.jit(lambda x, w, b: jax.nn.relu(x @ w + b))
    n = LARGE[device]
    small, large = make_inputs(*SMALL, seed=154), make_inputs(n, n, n, seed=155)
    args = {name: jax_in(arrays, device, "float32") for name, arrays in (("small", small), ("large", large))}
    jax.block_until_ready(list(args.values()))
    timers = {name: timing.host_timer(lambda a=a: line(*a), jax.block_until_ready) for name, a in args.items()}
    runs = timing.interleaved(timers, "host-sync", trials=9, warmup=2)
    work = {"small": SMALL[0] * SMALL[1] * SMALL[2], "large": n**3}
    found = judges.assert_host_overhead_dominates(
        (work["small"], runs["small"].median), (work["large"], runs["large"].median), LEAST
    )
    evidence(device=device, **found, **{k: v.summary() for k, v in runs.items()})
    assert_matches_reference(
        jax_out(line(*args["small"]), "float32"),
        reference_forward(*small),
        dtype="float32",
        k=SMALL[1],
        stack=stack,
        device=device,
    )
