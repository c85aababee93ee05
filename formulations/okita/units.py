"""The integer units of okita's CP-SAT model: costs times `SCALE`, rates times `UNIT`.

Shared by the model (`formulations.okita.cpsat`) and the hints built from a schedule
(`formulations.okita.start`), which must round every cost exactly as the model does.
"""

from __future__ import annotations

from edgeopt.core import InputError

SCALE = 10_000
UNIT = 1000
#: A coefficient's rounding below this fraction of its value is float noise of the product (q * delta),
#: which the schedule's own objective carries too, not a rounding of the model.
_NOISE_RTOL = 1e-9


def scaled_int(x: float, field: str) -> int:
    """``x`` times `UNIT`, which must be an integer (at most 3 decimals): `InputError` naming ``field`` otherwise."""
    v = round(x * UNIT)
    if abs(v - x * UNIT) > 1e-6:
        raise InputError(field, f"cpsat needs at most 3 decimals, got {x}")
    return int(v)


def rounded(x: float) -> tuple[int, float]:
    """``x`` scaled and rounded to an integer, and how far the integer's cost is from ``x``."""
    v = round(x * SCALE)
    err = abs(v / SCALE - x)
    return v, (0.0 if err <= _NOISE_RTOL * max(1.0, abs(x)) else err)


def scaled_cost(x: float) -> int:
    """A cost in the model's integer units (times ``SCALE``, rounded as every coefficient of the model)."""
    return rounded(x)[0]
