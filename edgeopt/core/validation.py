"""Violations reported by the families' validators."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken constraint.

    Attributes:
        equation: the paper's equation label, e.g. ``"2h"`` or ``"completion<=T"``.
        message: what is wrong, with the numbers.
        job: the job concerned, if any.
    """

    equation: str
    message: str
    job: int | None = None

    def __str__(self) -> str:
        who = f" job {self.job}:" if self.job is not None else ""
        return f"({self.equation}){who} {self.message}"


def objective_matches(stated: float | None, actual: float, *, rtol: float = 1e-6, atol: float = 1e-6) -> bool:
    """Whether an objective stated in a result equals the one recomputed from its schedule."""
    return stated is not None and abs(stated - actual) <= atol + rtol * abs(actual)
