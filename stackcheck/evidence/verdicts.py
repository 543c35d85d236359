"""Verdicts on measured numbers against the course's words: a donated buffer reused (§6.1), host
memory shared, not copied (§6.2), Python that is no Mojo (§10.1),
FlashAttention's peak memory (§3.1),
bf16 paying where matrix units are (§12.5), one best tile not fitting every shape (§12.5), and the
example's block size beaten (§10.5)."""

from __future__ import annotations

import numpy as np

from stackcheck.evidence import judged


def assert_flash_saves(flash_peak: int, math_peak: int, scores: int) -> dict:
    """§3.1: the math backend's peak holds the score matrix (>= 90 % of it); flash's stays under 5 % of it."""
    found = {"scores_bytes": scores, "math_peak": math_peak, "flash_peak": flash_peak}
    assert math_peak >= 0.9 * scores, f"the math backend should materialize the scores: {found}"
    assert flash_peak <= 0.05 * scores, f"the flash backend should not: {found}"
    return found


def assert_bf16_pays_where_units_are(
    speedup: float, matrix_units: bool, fast_at_least: float = 3.0, slow_at_most: float = 2.0
) -> None:
    """§12.5: which dtype is fast depends on the device. bf16's speed-up over fp32 on one matmul
    (fp32 time / bf16 time) is at least ``fast_at_least`` where bf16 units run it (a GPU's tensor
    cores; a CPU's AMX tiles or AVX512-BF16 dot products) and at most the 2x of half the bytes where
    there are none."""
    if matrix_units:
        assert speedup >= fast_at_least, (
            f"bf16 on bf16 matrix units should be >= {fast_at_least}x faster than fp32: {speedup:.2f}x"
        )
    else:
        assert speedup <= slow_at_most, (
            f"with no bf16 matrix units, bf16 should not be much faster than fp32 (<= {slow_at_most}x): {speedup:.2f}x"
        )


def assert_best_tile_differs(medians: dict[str, dict[str, float]], margin: float = 1.3) -> dict:
    """§12.5: ``medians[shape][tile]`` in seconds. Each shape's fastest tile beats the other shape's
    fastest tile, on this shape, by ``margin``: no one tile is best for every shape."""
    best = {shape: min(times, key=times.get) for shape, times in medians.items()}
    found = {
        "best": best,
        "medians_ms": {s: {t: round(v * 1e3, 3) for t, v in times.items()} for s, times in medians.items()},
    }
    for shape, times in medians.items():
        for other in set(best.values()) - {best[shape]}:
            assert times[other] >= margin * times[best[shape]], (
                f"on {shape}, tile {other} is within {margin}x of the best, {best[shape]}: {found}"
            )
    assert len(set(best.values())) > 1, f"one tile is fastest for every shape: {found}"
    return found


def block_beaten(medians: dict[int, dict[int, float]], block: int) -> dict[int, tuple[float, int]]:
    """§10.5: ``medians[elements][block size]`` in seconds -> for each element count, how many times
    slower ``block`` runs than the fastest other block size, and that block size."""
    beaten = {}
    for n, times in medians.items():
        by = min((b for b in times if b != block), key=times.get)
        beaten[n] = (times[block] / times[by], by)
    return beaten


def most_beaten(beaten: dict[int, tuple[float, int]]) -> tuple[int, float, int]:
    """The element count of ``beaten`` where the block is slowest against another: (count, ratio, block)."""
    n = max(beaten, key=lambda k: beaten[k][0])
    return n, *beaten[n]


def assert_block_beaten(beaten: dict[int, tuple[float, int]], block: int, least: float) -> dict:
    """§10.5: at some element count of ``beaten`` (from ``block_beaten``) another block size runs the
    kernel at least ``least`` times faster than ``block``: it is a choice, not the optimum."""
    n, ratio, by = most_beaten(beaten)
    found = {
        "beaten_by": {str(k): {"block": b, "ratio": round(r, 3)} for k, (r, b) in beaten.items()},
        "judged": [judged.line(f"block_{block}_over_{by}_at_{n}", ratio, at_least=least, of=(str(block), str(by)))],
    }
    assert ratio >= least, (
        f"block {block} is within {least}x of the fastest block size at every element count (at most "
        f"{ratio:.3f}x slower, than block {by} at {n} elements): {found}"
    )
    return found


def assert_host_overhead_dominates(small: tuple[int, float], large: tuple[int, float], least: float = 0.5) -> dict:
    """§9.6: ``small`` and ``large`` are (multiply-adds, median seconds per synced call) of one
    compiled forward. Timed at the large size the call is work; at the rate it works there, the small
    call's own work takes a sliver of its time: the rest, at least ``least`` of it, is host overhead
    (dispatch, launch, the wait)."""
    rate = large[1] / large[0]  # seconds per multiply-add, where the work dominates
    share = 1 - small[0] * rate / small[1]
    found = {
        "overhead_share": round(share, 4),
        "small_call_us": round(small[1] * 1e6, 1),
        "large_call_us": round(large[1] * 1e6, 1),
        "work_ratio": round(large[0] / small[0]),
        "judged": [judged.line("overhead_share", share, at_least=least)],
    }
    assert share >= least, f"at the small size most of a call's time is host overhead, not work: {found}"
    return found


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


def assert_buffers_reused(temp_bytes: int, intermediates: int, each_bytes: int) -> dict:
    """§5.1's buffer planning: a program whose ``intermediates`` values of ``each_bytes`` are each dead
    once the next is made needs scratch memory (XLA's temp bytes) for at most all but two of them:
    buffers are reused by their lifetimes (the CPU ran the chain in one buffer, the H200 in two)."""
    found = {"temp_bytes": temp_bytes, "intermediates": intermediates, "bytes_each": each_bytes}
    most = (intermediates - 2) * each_bytes
    assert temp_bytes <= most, f"the intermediates' buffers are reused: at most {most} bytes of scratch: {found}"
    return found


def assert_tile_fits_some_devices_only(shared: dict[int, int], limits: dict[int, int]) -> dict:
    """§12.5: ``shared[arch]``, the bytes of shared memory one tile's program needs when compiled for
    compute capability ``arch``, against ``limits[arch]``, the most a block may use there. The same
    tile fits some devices and not others."""
    fits = {arch: need <= limits[arch] for arch, need in shared.items()}
    found = {f"sm_{arch}": f"{need} of {limits[arch]} bytes" for arch, need in shared.items()}
    assert any(fits.values()), f"the tile fits no device: {found}"
    assert not all(fits.values()), f"the tile fits every device, which shows nothing about tiles: {found}"
    return {"fits": sorted(f"sm_{a}" for a, ok in fits.items() if ok), "shared": found}


def assert_donated_buffer_reused(donated: tuple, kept: tuple) -> None:
    """§6.1: (X's address, Y's address, X consumed) with X donated, and without: donated, Y lands in X's
    buffer and X is consumed; not donated, Y gets a buffer of its own and X stays."""
    assert donated[0] == donated[1] and donated[2], f"donated: Y in X's buffer, X consumed: {donated}"
    assert kept[0] != kept[1] and not kept[2], f"not donated: Y in a buffer of its own, X kept: {kept}"


def assert_same_memory(array: np.ndarray, addresses: dict, after_write: dict) -> None:
    """``addresses``: each library's data address for ``array``; ``after_write``: what each reads at
    [0, 0] after the array's [0, 0] was set."""
    copied = {name: a for name, a in addresses.items() if a != array.ctypes.data}
    stale = {name: v for name, v in after_write.items() if v != array[0, 0]}
    assert not copied and not stale, (
        f"shared memory, no copy: array at {array.ctypes.data}, copies at {copied}, stale reads {stale}"
    )


def assert_python_is_not_mojo(python_output: str, dynamic: tuple[int, str], typed: tuple[int, str]) -> None:
    """§10.1: the source Python runs (``python_output``) fails ``mojo build`` with a type error
    (``dynamic``: exit code, messages), and its one-type version builds (``typed``)."""
    assert python_output.strip(), "the dynamic source must run as Python"
    assert dynamic[0] != 0 and "convert" in dynamic[1], (
        f"Mojo must reject the variable that changes type (exit {dynamic[0]}): {dynamic[1][-500:]}"
    )
    assert typed[0] == 0, f"the one-type version must build (exit {typed[0]}): {typed[1][-500:]}"


def assert_programs_run_at_once(counted: int, atomic: int, programs: int, most: float) -> dict:
    """§7.1: a GPU runs a kernel's programs at once, in no order: ``programs`` of them each adding one
    to a single counter leave all ``programs`` there when the add is atomic, but at most ``most`` of
    them when each reads, adds and writes back (programs that ran together read the same value)."""
    found = {
        "programs": programs,
        "counted_atomic": atomic,
        "counted_read_add_write": counted,
        "judged": [judged.line("read-add-write count / programs", counted / programs, at_most=most)],
    }
    assert atomic == programs, f"the atomic count must hold every program's add: {found}"
    assert counted <= most * programs, (
        f"the programs' plain read-add-writes were not lost: they did not run at once, as a GPU runs them: {found}"
    )
    return found
