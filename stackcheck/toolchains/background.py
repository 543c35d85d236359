"""Work started ahead of the tests that need it (MAX graph compiles, ncu profiles), on one service:
a lane per kind of work, each one thread (two ncu sessions at once would time-slice the GPU; two
compiles at once would fight for the same cores), each started on its first job. The plugin opens
the service at configure, keeps it in ``config.stash`` and closes it at unconfigure; code run outside
pytest gets one on first use, and a forked child a fresh one. Nothing starts a thread at import."""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Callable

_LOCK = threading.Lock()
_OPEN: Background | None = None


class Background:
    def __init__(self) -> None:
        self._lanes: dict[str, concurrent.futures.ThreadPoolExecutor] = {}
        self._caches: list[tuple[dict, Callable]] = []

    def submit(self, lane: str, fn: Callable, *args) -> concurrent.futures.Future:
        with _LOCK:
            pool = self._lanes.get(lane)
            if pool is None:
                pool = self._lanes[lane] = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=lane)
        return pool.submit(fn, *args)

    def forget_on_close(self, cache: dict, future_of: Callable = lambda value: value) -> None:
        """At close, drop the entries of ``cache`` (a module's cache of this service's futures, each
        value's future ``future_of(value)``) that did not finish: a later service must not hand out a
        future no thread will finish, and a finished one (a compiled model) outlives the run. Once
        per cache, however often it is asked."""
        if all(cache is not known for known, _ in self._caches):
            self._caches.append((cache, future_of))

    def lanes(self) -> list[str]:
        return sorted(self._lanes)

    def close(self) -> None:
        """Let running jobs finish, drop queued ones, and forget their futures."""
        for pool in self._lanes.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._lanes.clear()
        for cache, future_of in self._caches:
            for key, value in list(cache.items()):
                if not future_of(value).done() or future_of(value).cancelled():
                    del cache[key]
        self._caches.clear()


def service() -> Background:
    """The open service; one is opened on first use."""
    global _OPEN
    with _LOCK:
        if _OPEN is None:
            _OPEN = Background()
        return _OPEN


def opened() -> Background | None:
    """Open the service unless one is: the service when this call opened it (its opener closes it; a
    pytest run inside another, pytester's, finds the outer run's service and leaves it alone), else None."""
    global _OPEN
    with _LOCK:
        if _OPEN is not None:
            return None
        _OPEN = Background()
        return _OPEN


def _forget_in_child() -> None:
    """A forked child has none of its parent's threads: its lanes would take jobs no thread runs."""
    global _OPEN
    _OPEN = None


os.register_at_fork(after_in_child=_forget_in_child)


def close() -> None:
    """Close the open service (the next ``service()`` opens a new one)."""
    global _OPEN
    with _LOCK:
        found, _OPEN = _OPEN, None
    if found is not None:
        found.close()
