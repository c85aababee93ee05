"""Machinery shared by every family: results, ledgers, prices, the online driver, batching, registry."""

from edgeopt.core.batching import Round, geometric_rounds, round_of, tau
from edgeopt.core.errors import InputError, ModelError
from edgeopt.core.family import FamilySpec, parse_model
from edgeopt.core.ledger import CapacityLedger
from edgeopt.core.online import Decision, OnlinePolicy, run_online
from edgeopt.core.prices import exponential_price, price_base
from edgeopt.core.registry import AlgorithmSpec, lookup, register, registered
from edgeopt.core.result import Result, Status, stopwatch
from edgeopt.core.validation import Violation, objective_matches

__all__ = [
    "AlgorithmSpec", "CapacityLedger", "Decision", "FamilySpec", "InputError", "ModelError",
    "OnlinePolicy", "Result", "Round", "Status", "Violation", "exponential_price", "geometric_rounds",
    "lookup", "objective_matches", "parse_model", "price_base", "register", "registered", "round_of",
    "run_online", "stopwatch", "tau",
]
