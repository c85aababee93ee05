"""Upper bounds on every number an instance file may hold, and why each is what it is.

JSON (and pydantic) accept any integer and any double, including ``1e308`` and
``Infinity``; the models cannot use most of them. Every family's instance model
declares its numeric fields with these bounds (``Field(le=...)``), so a value the
code cannot represent is an `InputError` naming the field (exit 2), and every
product the families form stays exact in int64 and float64:

* ``MAX_HORIZON`` slots (10**7; the preemptive paper generator draws up to about 1.2 * 10**6):
  the exact models are time-indexed and the size guard refuses most horizons long before this,
  but no family may be handed more slots.
  Arrivals and upload delays are slots too and share the bound (an arrival must
  also lie inside the instance's own horizon: checked by each family's model).
* ``MAX_COUNT`` (10**4): epochs, chunks, mini-batches per chunk, workers, PSs. A
  job's work E * D * K is then at most 10**12 mini-batches.
* ``MAX_SLOTS_PER_STEP`` (10**3): slots one mini-batch, one PS update or one
  all-reduce may take. With the work bound, a duration is at most 10**15 slots,
  below 2**53 (exact in float64) and far below the int64 limit; a job that long
  fits no horizon and is *unschedulable* (a `partial` / `infeasible` result with
  the reason), never an overflow.
* ``MAX_WEIGHT`` (10**6): a job's weight; weighted completion times stay below
  10**6 * 10**4 jobs * 10**15 slots = 10**25, finite in float64.
* ``MAX_MB`` (10**7 MB, 10 TB) for gradient, chunk and storage sizes, ``MIN_MBPS`` /
  ``MAX_MBPS`` (10**-3 .. 10**7 Mbit/s) for bandwidths, ``MIN_SLOT_SECONDS`` /
  ``MAX_SLOT_SECONDS`` (10**-3 .. 10**7 s): a transfer then lasts at most
  8 * 10**7 / 10**-3 = 8 * 10**10 s, finite; in slots it is bounded like a step.
* ``MAX_CAPACITY`` (10**9) for a resource capacity or demand (GPUs, cores, GB, Mbit/s).
* ``MAX_JOBS`` / ``MAX_SERVERS`` (10**4): list lengths.

New families use the same constants for the same kinds of quantity.
"""

from __future__ import annotations

MAX_HORIZON = 10**7
MAX_COUNT = 10**4
MAX_SLOTS_PER_STEP = 1e3
MAX_WEIGHT = 1e6
MAX_MB = 1e7
MIN_MBPS = 1e-3
MAX_MBPS = 1e7
MIN_SLOT_SECONDS = 1e-3
MAX_SLOT_SECONDS = 1e7
MAX_CAPACITY = 1e9
MAX_JOBS = 10**4
MAX_SERVERS = 10**4
