"""§6.5 and checkpoint 2: a timing judgment may call itself undecidable only on noise the suite's own
clock read. Seconds that the implementation under test read (its timed_call, steady_state) stay
marked as its own through every statistic computed from them, and call_it, call_within,
call_shortfall and call_early_return never let them excuse a shortfall: a timer that forgets the sync reads microseconds
one call and milliseconds the next, and its scatter would hide its own error."""

import importlib
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.evidence import timing
from stackcheck.impl import contract
from stackcheck.impl.loader import Impl

pytestmark = pytest.mark.meta

SECONDS_FORMS = (contract.SECONDS, [contract.SECONDS])
CLOCKS = sorted(n for n, t in contract.TASKS.items() if t.form in SECONDS_FORMS)
samples = st.lists(st.floats(1e-7, 10.0), min_size=3, max_size=12)
series = st.tuples(samples, st.booleans())  # (samples, read by the implementation)


def measured(values: list[float], theirs: bool) -> timing.Measurement:
    return timing.Measurement("m", "host-sync", timing.read_by_implementation(values) if theirs else list(values))


def decision(call) -> str | None:
    """The skip message ``call()`` raised, or None."""
    try:
        call()
    except pytest.skip.Exception as skipped:
        return str(skipped)
    return None


def test_the_surface_has_clocks():
    assert CLOCKS, "no task of the contract returns seconds: this file would check nothing"


@pytest.mark.parametrize("name", CLOCKS)
@pytest.mark.parametrize("provided", [False, True], ids=["reference", "module"])
def test_every_clock_of_the_surface_reads_as_the_implementations(name, provided, tmp_path, monkeypatch):
    """Every task that returns seconds, whether the module provides it or the reference stands in."""
    module = None
    if provided:
        (tmp_path / f"own_{name}.py").write_text(
            "from stackcheck.impl import reference\n"
            f"def {name}(*args, **kwargs):\n    return reference.{name}(*args, **kwargs)\n"
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, f"own_{name}", raising=False)
        module = importlib.import_module(f"own_{name}")
        assert Impl(module).provided == [name]
    read = getattr(Impl(module), name)(lambda: None, None)
    values = read if isinstance(read, list) else [read]
    assert values and all(isinstance(v, timing.ImplSeconds) for v in values), (name, provided, read)


@given(series)
def test_every_statistic_of_their_series_stays_theirs(drawn):
    """Every number a Measurement offers, and the arithmetic the claims do with them."""
    values, theirs = drawn
    m, suite = measured(values, theirs), measured(values, False)
    numbers = {n: getattr(m, n) for n, v in vars(timing.Measurement).items() if isinstance(v, property)}
    numbers.pop("clock")
    numbers |= {
        "scatter": timing.scatter(m),
        "ratio": timing.ratio(m, suite),
        "ratio, theirs below": timing.ratio(suite, m),
        "mean": sum(m.samples) / len(m.samples),
        "product": m.spread * suite.spread,
        "extremes": max(m.samples) / min(m.samples),
        "power": +(m.median**0.5) // 1 + m.median % 1,
    }
    assert m.clock == ("implementation" if theirs else "suite")
    assert {n: timing.suite_read(v) for n, v in numbers.items()} == dict.fromkeys(numbers, not theirs)


@given(st.lists(series, min_size=1, max_size=4), st.floats(0.001, 100.0), st.floats(0.001, 100.0))
def test_a_shortfall_is_excused_only_by_the_suites_series(drawn, value, least):
    runs = [measured(v, theirs) for v, theirs in drawn]
    ours = [m for m in runs if m.clock == "suite"]
    judged = decision(lambda: timing.call_shortfall(value, least, runs, {}))
    assert judged == decision(lambda: timing.call_shortfall(value, least, ours, {}))
    if not ours:
        assert judged is None, f"only the implementation's series, and still excused: {judged}"


@pytest.mark.parametrize("judge", ["call_it", "call_within"])
@given(
    floors=st.lists(st.tuples(st.floats(1.0, 100.0), st.booleans()), min_size=1, max_size=4),
    value=st.floats(0.01, 10.0),
    line=st.floats(1.0, 10.0),
)
def test_a_noise_floor_read_by_the_implementation_excuses_nothing(judge, floors, value, line):
    call = getattr(timing, judge)
    given_floors = [timing.ImplSeconds(f) if theirs else f for f, theirs in floors]
    ours = [f for f in given_floors if timing.suite_read(f)]
    judged = decision(lambda: call(value, line, given_floors, {}))
    assert judged == decision(lambda: call(value, line, ours, {}))
    if not ours:
        assert judged is None, f"only the implementation's noise, and still excused: {judged}"
    first = given_floors[0]  # one floor alone, not in a list
    alone = decision(lambda: call(value, line, [first], {})) if timing.suite_read(first) else None
    assert decision(lambda: call(value, line, first, {})) == alone


@given(samples, samples)
def test_an_early_return_is_judged_against_work_the_suite_timed(unsynced, work):
    quick = measured([min(work) / 10, *unsynced], True)
    assert decision(lambda: timing.call_early_return(quick, measured(work, True), {})) is None
    assert decision(lambda: timing.call_early_return(quick, measured(work, False), {})) is not None


SCATTERED_FORGETFUL = '''
"""A timer that forgets the sync, on a loaded host: one call in three it reads 50 ms more (the
caller waited for a core), so its own series scatters from microseconds to milliseconds."""
import time

calls = [0]


def timed_call(fn, sync=None):
    start = time.perf_counter()
    fn()
    calls[0] += 1
    return time.perf_counter() - start + (0.05 if calls[0] % 3 == 0 else 0.0)
'''

INFLATED_STEADY = '''
"""A steady-state timer that reads a thousand times what the suite's clock reads for the same call in
the same minutes: its error, not another process on the device."""
from stackcheck.impl import reference


def steady_state(fn, sync=None, trials=9, warmup=2):
    return [1000 * seconds for seconds in reference.steady_state(fn, sync, trials, warmup)]
'''


@pytest.mark.parametrize(
    ("impl", "test", "failure"),
    [
        (
            SCATTERED_FORGETFUL,
            "test_q2_unsynced_timer.py::test_jax_unsynced_timer_misses_the_work",
            "*the synced timer must measure the work*",
        ),
        (
            INFLATED_STEADY,
            "test_s6_5_regimes.py::test_regimes_give_different_numbers_in_order",
            "*the first call includes tracing and compiling*",
        ),
    ],
    ids=["Q2-forgetful-scattered", "S6.5-steady-inflated"],
)
def test_a_timer_whose_own_readings_scatter_is_caught(judged_on_jax_cpu, impl, test, failure):
    """The wrong timer fails the claim; before, its own scatter made it inconclusive."""
    result = judged_on_jax_cpu(impl, test)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([failure])
