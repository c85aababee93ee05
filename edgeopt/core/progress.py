"""Progress of one long algorithm run, reported to whoever listens (the CLI's progress bar).

An online algorithm calls `report(done, total)` as it advances, in slots (timesteps) of its horizon;
it costs one context-variable read when nobody listens. A caller that wants to see it wraps the
run in ``with listening(callback):``. The callback is throttled here, so an algorithm may report
every slot.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Callback = Callable[[int, int], None]

_listener: ContextVar[tuple[Callback, list[float]] | None] = ContextVar("edgeopt_progress", default=None)

#: Seconds between two calls of the callback (the first report of done == total always goes through).
MIN_INTERVAL_S = 0.1


def report(done: int, total: int) -> None:
    """``done`` of ``total`` units of the current run are finished."""
    entry = _listener.get()
    if entry is None:
        return
    callback, last = entry  # last = [time of the last call, done at the last call]
    now = time.monotonic()
    if (done >= total and done != last[1]) or now - last[0] >= MIN_INTERVAL_S:
        last[0], last[1] = now, done
        callback(done, total)


@contextlib.contextmanager
def listening(callback: Callback) -> Iterator[None]:
    """Call ``callback(done, total)`` (throttled) while the block runs."""
    token = _listener.set((callback, [float("-inf"), -1]))
    try:
        yield
    finally:
        _listener.reset(token)
