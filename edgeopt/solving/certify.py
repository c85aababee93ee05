"""Which claims of a result `validate` checks, and `certify`, which re-proves the ones it cannot.

A result claims more than its schedule: ``optimal`` says no schedule is better, a ``bound`` says no
schedule is below it. The validator (`FamilySpec.check_result`) checks what the result itself shows
(the schedule, its objective, every job covered, a zero gap for ``optimal``, ``bound <= objective``,
``optimal`` only from an exact method); `claims` lists those and the ones it leaves open.

`certify` decides the open ones, within one time limit:

1. the family's own (non-relaxed) algorithms run first: a valid complete schedule below a claimed
   optimum, or below a claimed bound, refutes the claim at once (a relabelled online schedule is
   usually caught here);
2. an exact re-solve, when the model fits `CERTIFY_MAX_NONZEROS` (a method other than the
   result's own first): a proven optimum settles both claims; at its time limit, its incumbent can
   still refute and its bound can still confirm;
3. for larger instances, the lower bound of ``api.bound`` (when that exists): a bound at or above
   the claimed optimum confirms it, and a bound at or above a claimed bound confirms that bound.

Each claim ends ``certified``, ``false`` (with the evidence) or ``not certified`` (undecided in the
time given, or nothing to decide it with); the verdict is ``false`` if any claim is, ``certified``
if all are, ``not certified`` otherwise. ``edgeopt validate --certify`` exits 1 on ``false`` and 0
on ``not certified`` (it prints those words, and its ``--json`` holds ``"verdict": "not certified"``):
an undecided claim is not shown to be a lie.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from edgeopt.core import FamilySpec, InputError, ModelError, Result, Status
from edgeopt.core.family import ZERO_GAP_RTOL
from edgeopt.core.limits import Deadline
from edgeopt.services import lookup
from edgeopt.solving import bounds
from edgeopt.solving import exact as exact_solving
from edgeopt.solving.warmstart import run_in_time

#: Largest model (estimated nonzeros) `certify` re-solves exactly; above it only bounds are used.
CERTIFY_MAX_NONZEROS = 300_000

CERTIFIED, FALSE, NOT_CERTIFIED = "certified", "false", "not certified"


@dataclasses.dataclass
class Claim:
    """One claim of a result and what became of it.

    Attributes:
        claim: what the result claims, in words.
        checked: whether plain validation decides it.
        verdict: for `certify`: ``certified``, ``false`` or ``not certified`` (None in `claims`).
        evidence: how it was decided, or why it was not.
    """

    claim: str
    checked: bool
    verdict: str | None = None
    evidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def claims(spec: FamilySpec, result: Result) -> list[Claim]:
    """The claims of ``result``: those `FamilySpec.check_result` checks and those it does not."""
    out = [Claim("result of this family and instance (instance_sha256)", True)]
    if result.schedule is not None:
        out += [Claim("schedule satisfies the family's constraints", True),
                Claim("every job scheduled or listed as rejected, exactly once; rejected lists agree", True),
                Claim("objective is the schedule's objective", True)]
    out.append(Claim(f"status {result.status.value} fits the result (rejected jobs, schedule, producer)", True))
    if result.status == Status.BOUND:
        out.append(Claim("bound is a lower bound on the optimum: its certificate recomputes it without a solver",
                         True))
    elif result.bound is not None:
        out.append(Claim("bound <= objective", True))
        out.append(Claim("bound is a lower bound on the optimum", False, evidence="needs validate --certify"))
    if result.status == Status.OPTIMAL:
        out.append(Claim("optimal: zero gap (bound == objective)", True))
        exact = _exact_names(spec)
        out.append(Claim("optimal: produced by an exact method", exact is not None,
                         evidence="" if exact is not None else "the family's exact methods are unknown"))
        out.append(Claim("optimal: the objective is the optimum", False, evidence="needs validate --certify"))
    if result.status == Status.INFEASIBLE:
        out.append(Claim("infeasible: no schedule of every job exists", False,
                         evidence="tried to refute with the family's algorithms; not proven"))
    return out


def _exact_names(spec: FamilySpec) -> set[str] | None:
    from edgeopt.core.registry import exact_method_names

    return exact_method_names(spec.name)


def _tol(x: float) -> float:
    """What an ``optimal`` claim may be off by: the zero-gap tolerance of the exact methods."""
    return ZERO_GAP_RTOL * max(1.0, abs(x))


#: Relative float error allowed when a bound is compared with an objective: a sum of a few thousand
#: terms in double precision is off by far less (about 1e-12 relative). A bound above a valid schedule's
#: objective by more than this is false, however small the excess (50.004 above an optimum of 50 is).
FLOAT_RTOL = 1e-9


def _float_tol(*xs: float) -> float:
    return FLOAT_RTOL * max(1.0, *(abs(x) for x in xs))


@dataclasses.dataclass
class Certificate:
    """What `certify` found: one entry per claim it tried, and the overall verdict."""

    verdict: str
    claims: list[Claim]
    evidence: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "claims": [c.to_dict() for c in self.claims], "evidence": self.evidence}


def certify(instance: Any, result: Result, *, time_limit: float = 60.0,
            max_nonzeros: int = CERTIFY_MAX_NONZEROS) -> Certificate:
    """Re-prove the claims of ``result`` that validation leaves open (see the module docstring).

    ``result`` should already be valid (`edgeopt.api.validate`); `certify` decides only its
    optimality and bound claims. ``time_limit`` is shared by the three steps: the re-solve and the
    bound get what is left of it; it is checked before each algorithm run, and a run of an ``offline``
    algorithm still going at the deadline is interrupted (`Deadline.guard`) and refutes nothing (an
    online algorithm or baseline, seconds on paper-size instances, is let finish).
    """

    spec = lookup.family_of(instance)
    deadline = Deadline(time_limit)
    obj, bound = result.objective, result.bound
    wanted: dict[str, Claim] = {}
    if result.status == Status.OPTIMAL and obj is not None:
        wanted["optimal"] = Claim(f"optimal: {obj:g} is the optimum", False, NOT_CERTIFIED)
    if bound is not None:
        wanted["bound"] = Claim(f"bound {bound:g} is a lower bound on the optimum", False, NOT_CERTIFIED)
    evidence: list[str] = []
    if not wanted:
        return Certificate(CERTIFIED, [], ["no claim beyond what validation checks"])
    if result.status == Status.OPTIMAL and "optimal" in wanted and "certificate" in result.extra:
        # an optimum proven by a certified bound alone carries that bound's certificate: re-checked here,
        # without a solver; one that does not check (edited, or for another instance) is no proof at all
        try:
            lb = bounds.check_optimal(instance, result)
            _settle(wanted["optimal"], CERTIFIED, f"its certificate proves every schedule costs >= {lb:g}")
            if "bound" in wanted and lb >= bound - _float_tol(bound, lb):
                _settle(wanted["bound"], CERTIFIED, f"its certificate proves the optimum is >= {lb:g}")
        except (ModelError, InputError) as exc:
            _settle(wanted["optimal"], FALSE, f"its certificate does not check: {exc}")
    if result.status == Status.BOUND and "bound" in wanted:
        # a bound result carries its proof: the certificate, recomputed here without a solver
        try:
            bounds.check_bound(instance, result)
            _settle(wanted["bound"], CERTIFIED, "its certificate recomputes the bound without a solver")
        except (ModelError, InputError) as exc:
            _settle(wanted["bound"], FALSE, f"its certificate does not check: {exc}")

    def refute_with_schedule(value: float, who: str) -> None:
        if "optimal" in wanted and value < obj - _tol(obj):
            _settle(wanted["optimal"], FALSE, f"{who} has a valid schedule of objective {value:g} < {obj:g}")
        if "bound" in wanted and value < bound - _float_tol(bound, value):
            _settle(wanted["bound"], FALSE, f"{who} has a valid schedule of objective {value:g} < bound {bound:g}")

    def confirm_with_lower_bound(lb: float, who: str) -> None:
        if "optimal" in wanted and lb >= obj - _tol(obj):
            _settle(wanted["optimal"], CERTIFIED, f"{who} proves every schedule costs >= {lb:g}")
        if "bound" in wanted and lb >= bound - _float_tol(bound, lb):
            _settle(wanted["bound"], CERTIFIED, f"{who} proves the optimum is >= {lb:g} >= {bound:g}")

    # 1. the family's own algorithms: an upper bound on the optimum, found fast
    for name, algo in lookup.algorithms(spec.name).items():
        if algo.relaxed or deadline.remaining() <= 0 or not _open(wanted):
            continue
        try:
            res = run_in_time(algo, lambda a=algo: a(instance, seed=0), deadline)
        except Exception:  # noqa: BLE001, S112 - an algorithm that fails refutes nothing
            continue
        if res is None:  # an offline algorithm interrupted at the deadline
            break
        if res.comparable and not spec.check_result(instance, res):
            refute_with_schedule(float(res.objective), f"algorithm {name}")
    # 2. an exact re-solve, when the model is small enough
    methods = sorted(lookup.exact_methods(spec.name), key=lambda m: (m == result.algorithm, m))
    for method in methods:
        if not _open(wanted) or deadline.remaining() <= 0.5:
            break
        try:
            exact = exact_solving.solve(instance, method=method, time_limit=deadline.remaining(), max_model_size=max_nonzeros)
        except InputError as exc:  # above the size budget: too large to re-solve here
            evidence.append(f"{method}: not re-solved ({exc.message})")
            continue
        except Exception as exc:  # noqa: BLE001 - a solver that fails decides nothing; say so, try the next
            evidence.append(f"{method}: re-solve failed ({exc.__class__.__name__}: {exc})")
            continue
        who = f"{method} re-solve ({exact.status.value})"
        if exact.objective is not None and exact.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.FEASIBLE) \
                and not spec.check_result(instance, exact):
            refute_with_schedule(float(exact.objective), who)
        if exact.status == Status.OPTIMAL and exact.objective is not None:
            opt = float(exact.objective)
            if "optimal" in wanted and _open({"o": wanted["optimal"]}):
                ok = abs(opt - obj) <= _tol(obj)
                _settle(wanted["optimal"], CERTIFIED if ok else FALSE,
                        f"{who}: the optimum is {opt:g}" + ("" if ok else f", not {obj:g}"))
            if "bound" in wanted and _open({"b": wanted["bound"]}):
                ok = bound <= opt + _float_tol(opt, bound)
                _settle(wanted["bound"], CERTIFIED if ok else FALSE,
                        f"{who}: the optimum is {opt:g}" + ("" if ok else f", below the bound {bound:g}"))
        elif exact.bound is not None:
            confirm_with_lower_bound(float(exact.bound), who)
        evidence.append(f"{who}: objective {exact.objective}, bound {exact.bound}")
        break  # one exact attempt: the time is spent
    # 3. a lower bound that scales (api.bound, when the toolkit has one)
    bound_fn = getattr(bounds, "bound", None)
    if _open(wanted) and deadline.remaining() > 0.5:
        if bound_fn is None:
            evidence.append("no lower-bound routine (api.bound) available")
        else:
            try:
                lb_res = bound_fn(instance, method="auto", time_limit=deadline.remaining())
                lb = getattr(lb_res, "bound", None)
                if lb is not None:
                    confirm_with_lower_bound(float(lb), f"lower bound {getattr(lb_res, 'algorithm', 'auto')}")
                    evidence.append(f"lower bound {lb:g}")
            except Exception as exc:  # noqa: BLE001 - a bound that cannot be had decides nothing
                evidence.append(f"lower bound not available: {exc}")
    for c in wanted.values():
        if c.verdict == NOT_CERTIFIED and not c.evidence:
            c.evidence = "undecided within the time limit and size budget"
    verdicts = {c.verdict for c in wanted.values()}
    verdict = FALSE if FALSE in verdicts else CERTIFIED if verdicts == {CERTIFIED} else NOT_CERTIFIED
    return Certificate(verdict, list(wanted.values()), evidence)


def _open(wanted: dict[str, Claim]) -> bool:
    return any(c.verdict == NOT_CERTIFIED for c in wanted.values())


def _settle(claim: Claim, verdict: str, evidence: str) -> None:
    """Record a verdict; ``false`` is final (evidence against a claim outweighs anything found later)."""
    if claim.verdict == FALSE:
        return
    claim.verdict, claim.evidence = verdict, evidence
