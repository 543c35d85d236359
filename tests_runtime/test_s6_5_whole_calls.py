"""§6.5, and §8.4's example (warm-up calls, then a synchronize, then the clock): each sample of a
steady-state series is one call's work, timed whole. JAX's CPU client dispatches asynchronously as a
GPU's does, so a CPU shows it: a sample that times the submission reads a small fraction of the work
(the sync left out, or kept for after the last trial), and a first sample that inherits warm-up
calls never waited for reads several times it. A backend that finishes the work inside the call
cannot show either: inconclusive there, with its numbers."""

import pytest

from stackcheck.evidence import judged, timing
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

WARMUP = 5  # warm-up calls of the learner's steady_state: unwaited, the first sample carries ~6 calls' work
TRIALS = 3
ROUNDS = 3
WHOLE = 0.5  # the learner's median sample over the suite's: at least this (one that times submission: ~0.001)
INHERITED = 2.0  # the learner's first sample over the suite's median: at most this (one that inherits: ~WARMUP + 1)


@pytest.mark.claim("S6.5-regimes")
@pytest.mark.parametrize("device", device_params("jax"))
def test_each_steady_state_sample_is_one_whole_call(impl, jax_matmul, evidence, device):
    jax = need("jax")
    f, a, b = jax_matmul
    timing.call_synchronous_backend(lambda: f(a, b), jax.block_until_ready, {"device": device})
    learner, firsts, suite = [], [], []
    for _ in range(ROUNDS):  # interleaved: a host or device shared with other work slows both alike
        samples = impl.steady_state(lambda: f(a, b), impl.jax_sync, trials=TRIALS, warmup=WARMUP)
        jax.block_until_ready(f(a, b))  # whatever it left running ends before the suite's clock starts
        learner += samples
        firsts.append(samples[0])
        suite += [timing.host_timer(lambda: f(a, b), jax.block_until_ready)() for _ in range(TRIALS)]
    runs = {
        "steady_state": timing.Measurement("steady_state", "host-sync", learner),
        "first samples": timing.Measurement("first samples", "host-sync", firsts),
        "suite's clock": timing.Measurement("suite's clock", "host-sync", suite),
    }
    whole = timing.ratio(runs["steady_state"], runs["suite's clock"])
    inherited = timing.ratio(runs["first samples"], runs["suite's clock"])
    report = {
        "device": device,
        "warmup": WARMUP,
        "sample_over_work": round(whole, 3),
        "first_sample_over_work": round(inherited, 2),
        **{k: v.summary() for k, v in runs.items()},
    }
    evidence(
        **report,
        judged=[
            judged.line("sample_over_work", whole, at_least=WHOLE, of=("steady_state", "suite's clock")),
            judged.line("first_sample_over_work", inherited, at_most=INHERITED, of=("first samples", "suite's clock")),
        ],
    )
    timing.call_shortfall(whole, WHOLE, list(runs.values()), report)
    assert whole >= WHOLE, (
        "steady_state's samples read a fraction of the work the suite's clock times: a timed call must wait "
        f"for its own work (sync(result) inside the clock, every trial): {report}"
    )
    timing.call_within(INHERITED / inherited, 1.0, timing.scatter(runs["suite's clock"]), report)
    assert inherited <= INHERITED, (
        f"steady_state's first sample reads {inherited:.1f}x one call's work: the warm-up calls' work was "
        f"never waited for and ran inside the first timed call (wait for each warm-up call, as §8.4's "
        f"example synchronizes before its clock): {report}"
    )
