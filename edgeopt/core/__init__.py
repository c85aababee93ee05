"""Machinery shared by every family: results, ledgers, prices, the online driver, batching, registry."""

from edgeopt.core.batching import Round, geometric_rounds, round_of, tau
from edgeopt.core.errors import InputError, ModelError
from edgeopt.core.family import FamilySpec, parse_model
from edgeopt.core.ledger import CapacityLedger
from edgeopt.core.limits import BuildTimeLimit, Deadline, ModelSize, guard_size
from edgeopt.core.online import Decision, OnlinePolicy, run_online
from edgeopt.core.prices import exponential_price, price_base
from edgeopt.core.registry import AlgorithmSpec, Param, lookup, register, registered, unregister
from edgeopt.core.result import Result, Status, stopwatch
from edgeopt.core.validation import Violation, objective_matches
from edgeopt.core.views import GanttBar, JobRow, UsageSeries

__all__ = [
    "AlgorithmSpec",
    "BuildTimeLimit",
    "CapacityLedger",
    "Deadline",
    "Decision",
    "FamilySpec",
    "GanttBar",
    "InputError",
    "JobRow",
    "ModelError",
    "ModelSize",
    "OnlinePolicy",
    "Param",
    "Result",
    "Round",
    "Status",
    "UsageSeries",
    "Violation",
    "exponential_price",
    "geometric_rounds",
    "guard_size",
    "lookup",
    "objective_matches",
    "parse_model",
    "price_base",
    "register",
    "registered",
    "round_of",
    "run_online",
    "stopwatch",
    "tau",
    "unregister",
]
