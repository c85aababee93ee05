"""Write the certified instances of the preemptive family: instance JSON + ``<name>.optimum.json``.

Each optimum of MINLP (2) is proved by both exact models (``milp``: Pyomo + HiGHS, ``cpsat``:
OR-Tools CP-SAT), which must agree; the file also stores the ILP (4) optimum and the value of
its LP relaxation (lower bounds, Lemma 1). Run from the repository root:

    .venv/bin/python instances/preemptive/make_certified.py
"""

from __future__ import annotations

from pathlib import Path

from edgeopt.core import Status
from edgeopt.core.jsonio import write_json
from edgeopt.preemptive import FAMILY, generate
from edgeopt.preemptive.instance import Instance
from formulations.preemptive import BOUNDS, METHODS

HERE = Path(__file__).resolve().parent


def _tiny(name: str, jobs: list[dict], servers: list[dict], horizon: int) -> Instance:
    base = {"epochs": 1, "chunks": 1, "minibatches_per_chunk": 1, "worker_time_slots": 2.0, "ps_time_slots": 0.0,
                "gradient_size_mb": 0.0, "bandwidth_mbps": 100.0, "worker_type": 0, "arrival": 0}
    return Instance(name=name, horizon=horizon, slot_seconds=1.0, servers=servers,
                    jobs=[{**base, **j, "id": k} for k, j in enumerate(jobs)])


def cases() -> list[tuple[str, Instance, dict]]:
    out = []
    for seed in (0, 7):
        out.append((f"small_seed{seed}", generate("small", seed=seed), {"preset": "small", "seed": seed}))
    out.append(("j6_s3_seed2", generate("small", seed=2, jobs=6, servers=3),
                {"preset": "small", "seed": 2, "jobs": 6, "servers": 3}))
    # PS (2e)/(2f) bind: three jobs, one edge server with three workers but two PSs, cloud PSs out of
    # reach for 6 slots; two job types.
    out.append(("ps_bound", _tiny(
        "ps_bound",
        [{"upload_delay_slots": [0, 6]}, {"upload_delay_slots": [0, 6], "arrival": 1},
         {"upload_delay_slots": [1, 6], "chunks": 2}, {"upload_delay_slots": [0, 6], "worker_type": 1}],
        [{"workers": [0, 0, 1], "ps": 2}, {"is_cloud": True}], horizon=16), {"hand_made": True}))
    # The colocated cloud rate (zeta_j = 1, eq. (1)) competes with a busy edge: communication adds one
    # slot per mini-batch unless the whole job is on the cloud.
    comm = {"gradient_size_mb": 100.0 / 16, "bandwidth_mbps": 100.0}
    out.append(("cloud_colocated", _tiny(
        "cloud_colocated",
        [dict(chunks=2, upload_delay_slots=[1, 3], **comm), dict(chunks=3, upload_delay_slots=[1, 3], **comm),
         {"arrival": 2, "upload_delay_slots": [0, 2]}],
        [{"workers": [0], "ps": 1}, {"is_cloud": True}], horizon=20), {"hand_made": True}))
    return out


def certify(name: str, inst: Instance, origin: dict) -> dict:
    res = {m: METHODS[m](inst, time_limit=120) for m in ("milp", "cpsat")}
    for m, r in res.items():
        if r.status != Status.OPTIMAL or FAMILY.check_result(inst, r):
            raise SystemExit(f"{name}: {m} did not certify ({r.status})")
    a, b = res["milp"].objective, res["cpsat"].objective
    if abs(a - b) > 1e-6 * max(1.0, abs(a)):
        raise SystemExit(f"{name}: milp {a} != cpsat {b}")
    ilp4, lp4 = BOUNDS["ilp4"](inst, time_limit=120), BOUNDS["lp4"](inst, time_limit=120)
    if ilp4.status != Status.OPTIMAL or lp4.status != Status.OPTIMAL:
        raise SystemExit(f"{name}: bounds not optimal")
    return {
        "instance": f"{name}.json",
        "objective": round(b, 9),
        "objective_name": FAMILY.objective_name,
        "certified_by": {m: {"status": r.status.value, "objective": r.objective, "bound": r.bound}
                         for m, r in res.items()},
        "ilp4_optimum": round(ilp4.bound, 9),
        "lp4_value": round(lp4.bound, 9),
        "generated_by": origin,
    }


def main() -> None:
    for name, inst, origin in cases():
        write_json(HERE / f"{name}.json", inst.model_dump(mode="json"))
        cert = certify(name, inst, origin)
        write_json(HERE / f"{name}.optimum.json", cert)
        print(f"{name}: OPT(2) = {cert['objective']}, ILP(4) = {cert['ilp4_optimum']}, LP(4) = {cert['lp4_value']}")


if __name__ == "__main__":
    main()
