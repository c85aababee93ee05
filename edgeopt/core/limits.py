"""Limits that hold for a whole call: a deadline covering model building, and a model-size guard.

`Deadline` is started when a solve is asked for; model builders call
`Deadline.check` in their loops and pass `Deadline.remaining` to the solver,
so ``time_limit`` bounds build + solve, not the solve alone. A builder that
runs out of time raises `BuildTimeLimit`, which the solve path turns into a
``time_limit`` result with no incumbent.

`ModelSize` is a family's estimate of a model before it is built. The solve
path compares it with a budget (`DEFAULT_MAX_NONZEROS`, raised with
``--max-model-size``) and refuses at once, with an `InputError` that gives
the size and what to do, instead of building a model that cannot fit.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import dataclasses
import logging
import math
import threading
import time
from collections.abc import Iterator

from edgeopt.core.errors import InputError

#: Default budget on a model's estimated nonzeros (about 2-3 GB through Pyomo on
#: these machines, see docs/solvers.md).
DEFAULT_MAX_NONZEROS = 2_000_000


class BuildTimeLimit(Exception):
    """The deadline passed while a model was being built."""


class Deadline:
    """A wall-clock deadline ``time_limit`` seconds from now (monotonic clock)."""

    def __init__(self, time_limit: float) -> None:
        if not (time_limit > 0 and math.isfinite(time_limit)):
            raise InputError("time_limit", f"must be a finite number > 0, got {time_limit}")
        self.time_limit = float(time_limit)
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return max(0.0, time.perf_counter() - self.start)

    def remaining(self, *, floor: float = 0.05) -> float:
        """Seconds left (at least ``floor``, so a solver asked for 0 s still returns at once)."""
        return max(floor, self.time_limit - self.elapsed())

    def expired(self) -> bool:
        return self.elapsed() >= self.time_limit

    def check(self, what: str = "model building") -> None:
        """Raise `BuildTimeLimit` if the deadline has passed."""
        if self.expired():
            raise BuildTimeLimit(f"time limit of {self.time_limit:g} s reached during {what}")

    @contextlib.contextmanager
    def guard(self, what: str = "model building", *, quiet: tuple[str, ...] = ("pyomo.core",)) -> Iterator[None]:
        """Raise `BuildTimeLimit` inside the ``with`` block as soon as the deadline passes.

        For Python code that has no `check` calls of its own (Pyomo's rule-based constraint
        construction, CP-SAT model building): a timer thread raises the exception asynchronously
        in the calling thread (CPython's ``PyThreadState_SetAsyncExc``; any thread, so it works in
        Dask workers too). It lands at the next Python bytecode, so a block that is inside a
        long C call (a solver run) is interrupted only when that call returns: never guard the
        solver's own run, give it `remaining` instead, and import extension modules before the
        block (an import interrupted half-way leaves a broken module behind). The loggers named in ``quiet`` (Pyomo logs an
        interrupted rule as an ERROR) are held at CRITICAL inside the block.
        """
        tid = threading.get_ident()
        lock = threading.Lock()
        state = {"active": True, "fired": False}

        def fire() -> None:
            with lock:
                if state["active"]:
                    state["fired"] = True
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(_AsyncBuildTimeLimit))

        timer = threading.Timer(max(0.0, self.time_limit - self.elapsed()), fire)
        timer.daemon = True
        loggers = [logging.getLogger(name) for name in quiet]
        levels = [lg.level for lg in loggers]
        for lg in loggers:
            lg.setLevel(logging.CRITICAL)
        try:
            timer.start()  # inside the try: a tiny deadline can fire before start() returns
            yield
            with lock:
                swallowed = state["fired"]
            if swallowed:
                # the asynchronous exception fired but never surfaced: CPython drops one that lands in
                # a gc callback or a __del__ ("Exception ignored ..."). The block overran; say so here
                # rather than let the caller go on to solve past its deadline.
                raise BuildTimeLimit(f"time limit of {self.time_limit:g} s reached during {what}")
        except _AsyncBuildTimeLimit:
            raise BuildTimeLimit(f"time limit of {self.time_limit:g} s reached during {what}") from None
        except Exception as exc:
            # library code may wrap the asynchronous exception in its own (pybind11 turns it into
            # "ImportError: initialization failed"): once fired, any error is the deadline's
            if state["fired"]:
                raise BuildTimeLimit(f"time limit of {self.time_limit:g} s reached during {what}") from exc
            raise
        finally:
            with lock:
                state["active"] = False
                timer.cancel()
                if state["fired"]:  # fired but maybe not delivered yet: withdraw it
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), None)
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)


class _AsyncBuildTimeLimit(BuildTimeLimit):
    """The exception `Deadline.guard` raises asynchronously (takes no arguments, as CPython requires)."""


@dataclasses.dataclass(frozen=True)
class ModelSize:
    """A model's size, estimated before it is built.

    Attributes:
        variables: decision variables.
        constraints: rows (or CP-SAT constraints).
        nonzeros: matrix nonzeros (or CP-SAT literals in constraints).
        note: what dominates, for the refusal message.
    """

    variables: int
    constraints: int
    nonzeros: int
    note: str = ""

    @property
    def memory_gb(self) -> float:
        """A rough memory estimate: about 1.5 kB per nonzero through Pyomo (measured; docs/solvers.md)."""
        return self.nonzeros * 1.5e-6

    def describe(self) -> str:
        return (f"{self.variables:,} variables, {self.constraints:,} constraints, {self.nonzeros:,} nonzeros "
                f"(about {self.memory_gb:.1f} GB)")


def guard_size(size: ModelSize, *, method: str, max_nonzeros: int | None) -> None:
    """Refuse a model above the budget, before it is built (InputError -> exit 2)."""
    budget = DEFAULT_MAX_NONZEROS if max_nonzeros is None else int(max_nonzeros)
    if size.nonzeros > budget:
        hint = f"; {size.note}" if size.note else ""
        # a bound's refusal must not send the user to `edgeopt bound`, where it came from
        instead = ("another bound method (`edgeopt bound INSTANCE --method M`)"
                   if method.startswith("bound ") else
                   "the other method, `edgeopt bound INSTANCE` (a certified lower bound at any size)")
        raise InputError(
            "instance",
            f"the {method} model would have {size.describe()}, above the budget of {budget:,} nonzeros{hint}: "
            f"use a smaller instance, {instead}, or raise the budget with --max-model-size",
        )


# ---- the size guard of a model with reduced-cost fixing: on the model fixing leaves ----------------

#: How far above the budget (a factor) a model with reduced-cost fixing may be estimated before its fixing and
#: still be tried: its fixing runs first and the model it leaves is guarded before it is built (`guard_built`).
#: The fixing's own arrays grow with the unfixed model's starts, so the factor bounds them too. A family whose
#: fixing does not grow with the unfixed model sets its own (``formulations.<family>.FIXING_HEADROOM``).
FIXING_HEADROOM = 100

_deferred: contextvars.ContextVar[tuple[int, ModelSize, str] | None] = contextvars.ContextVar(
    "edgeopt_deferred_size_guard", default=None)


@contextlib.contextmanager
def deferred_size_guard(budget: int, unfixed: ModelSize, method: str) -> Iterator[None]:
    """Inside the block, the exact model ``method`` (whose unfixed estimate ``unfixed`` is above ``budget``
    nonzeros) guards its own size just before it builds, on what its reduced-cost fixing left (`guard_built`)."""
    token = _deferred.set((int(budget), unfixed, method))
    try:
        yield
    finally:
        _deferred.reset(token)


def size_guard_deferred() -> bool:
    """Whether the current solve's size guard waits for the model fixing leaves (`deferred_size_guard`): the
    unfixed model is above the budget, so a model may fix where it otherwise would not bother (preemptive's
    windows below their job count)."""
    return _deferred.get() is not None


def guard_built(size: ModelSize | None) -> None:
    """Called by every exact model with reduced-cost fixing just before it builds: ``size`` is the estimate of
    the model it is about to build (after fixing), None when it cannot tell (then the unfixed estimate decides).
    Refuses (`guard_size`'s `InputError`) when a guard was deferred (`deferred_size_guard`) and the model is
    still above the budget; does nothing otherwise (the caller's guard already passed)."""
    deferred = _deferred.get()
    if deferred is None:
        return
    budget, unfixed, method = deferred
    if size is None:
        size = dataclasses.replace(unfixed, note=f"{unfixed.note}; reduced-cost fixing did not apply".lstrip("; "))
    else:
        size = dataclasses.replace(size, note=f"after reduced-cost fixing ({unfixed.describe()} before); {size.note}"
                                   .rstrip("; "))
    guard_size(size, method=method, max_nonzeros=budget)


# ---- a limit on deterministic solver work (the same on every machine, however busy) ----------------

#: Largest work limit accepted (deterministic units; see `work_limit`).
MAX_WORK_LIMIT = 1e6
#: HiGHS branch-and-bound nodes allowed per unit of work (HiGHS has no deterministic clock; with one
#: thread its search is deterministic, so a node count is a work measure that repeats exactly).
HIGHS_NODES_PER_WORK_UNIT = 100

_work_limit: contextvars.ContextVar[float | None] = contextvars.ContextVar("edgeopt_work_limit", default=None)


def check_work_limit(value: float | None) -> float | None:
    """``value`` if it is a usable work limit (None: no limit); `InputError` naming ``work_limit`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= MAX_WORK_LIMIT):
        raise InputError("work_limit", f"must be a number of work units in (0, {MAX_WORK_LIMIT:g}], got {value!r}")
    return float(value)


@contextlib.contextmanager
def work_limit(units: float | None) -> Iterator[None]:
    """Limit every exact solve inside the block by deterministic work instead of the clock alone.

    A wall-clock limit stops a solver at a different point on a busy machine than on an idle one; a
    work limit stops it at the same point everywhere, so a result obtained under it is reproducible
    (same status, incumbent and bound) on any machine at any load. One unit is:

    * CP-SAT: one second of its deterministic time (``max_deterministic_time``; on an idle core
      roughly a CPU second);
    * HiGHS: `HIGHS_NODES_PER_WORK_UNIT` branch-and-bound nodes (``mip_max_nodes``). The root node's
      LP and cuts are not counted: the wall-clock limit still bounds them.

    The wall-clock ``time_limit`` keeps applying; whichever is reached first stops the search (status
    ``time_limit`` either way). ``None`` lifts the work limit.
    """
    token = _work_limit.set(check_work_limit(units))
    try:
        yield
    finally:
        _work_limit.reset(token)


#: The name `edgeopt.api` uses, where ``work_limit`` is an argument.
work_limit_scope = work_limit


def current_work_limit() -> float | None:
    """The work limit in force (`work_limit`), or None."""
    return _work_limit.get()
