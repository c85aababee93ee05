"""HiGHS in a child process that the deadline can end: the time limit bounds the whole call on large models.

HiGHS 1.12's presolve has passes that never look at the clock: on a model of a quarter of a million variables
one pass ran 91 s under a 30 s limit, and no presolve rule HiGHS lets one switch off avoided it
(docs/solvers.md, time limits). HiGHS has no interrupt callback in presolve, and a C call cannot be broken
from Python, so the only way to keep the promise that ``time_limit`` bounds the whole call is to run such a
solve where it can be killed.

`solve_in_child` copies the model HiGHS already holds (``Highs.getLp``: the Pyomo translation is done once,
in the parent) into a temporary folder as plain arrays, runs this file as a script in a fresh interpreter
(it imports only numpy and highspy, so the child starts in a fraction of a second and never re-imports the
caller's program), and waits at most the time limit plus `grace_s`. The child gives HiGHS the same options
and MIP start the parent would have, and writes back HiGHS's status, objective, bound and column values.

While HiGHS runs, the child writes every improving MIP solution it reports (with the dual bound at that
moment) to the folder. If the parent has to kill the child, it returns the last of them with status
``time_limit``: a search that overran still gives its incumbent, and the caller's validator checks it as it
checks any other. A child that dies without an answer (killed from outside, out of memory) is an error,
not a result. Ctrl-C or SIGTERM in the parent kills the child before the exception goes on; on Linux a
parent killed outright takes the child with it (``PR_SET_PDEATHSIG``).

`formulations.common.solve_pyomo` sends a model here when it has at least `MIN_NONZEROS` nonzeros; smaller
models, where presolve takes milliseconds, are solved in-process and do not pay the child's start-up.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

#: Models with at least this many constraint-matrix nonzeros are solved in a child process. The smallest
#: measured overrun was on models of about a million nonzeros (preemptive 64 jobs without windows:
#: 1.3 M); an order of magnitude below it, the child's start-up (about 0.2 s) is small beside the solve.
MIN_NONZEROS = 100_000


def grace_s(time_limit: float) -> float:
    """How long past ``time_limit`` the parent waits for HiGHS to stop by itself before it kills it.

    HiGHS's own clock is checked between its steps; in the measured runs it overshot its limit by up to
    about 5 % when presolve did not hold it up. The grace lets such a run return its own answer (incumbent,
    bound and status), and stays small beside the limit.
    """
    return 1.0 + 0.05 * float(time_limit)


@dataclasses.dataclass
class ChildOutcome:
    """What HiGHS said in the child, in the terms Pyomo's HiGHS interface uses.

    Attributes:
        model_status: HiGHS's model status name (``kOptimal``, ``kTimeLimit``, ...); ``killed`` when the
            parent ended the child at the deadline; ``died (exit code N)`` when it ended without an answer.
        objective: the incumbent's objective (None without one).
        bound: HiGHS's dual bound (None when unknown).
        col_value: the incumbent's column values, in the parent model's column order (None without one).
    """

    model_status: str
    objective: float | None
    bound: float | None
    col_value: np.ndarray | None


def _lp_arrays(h: Any) -> dict[str, np.ndarray]:
    """The model ``h`` holds, as the arrays ``HighsLp`` is made of."""
    lp = h.getLp()
    a = lp.a_matrix_
    return {
        "num": np.array([lp.num_col_, lp.num_row_, int(a.format_), int(lp.sense_)], dtype=np.int64),
        "offset": np.array([lp.offset_], dtype=np.float64),
        "col_cost": np.asarray(lp.col_cost_, dtype=np.float64),
        "col_lower": np.asarray(lp.col_lower_, dtype=np.float64),
        "col_upper": np.asarray(lp.col_upper_, dtype=np.float64),
        "row_lower": np.asarray(lp.row_lower_, dtype=np.float64),
        "row_upper": np.asarray(lp.row_upper_, dtype=np.float64),
        "a_start": np.asarray(a.start_, dtype=np.int32),
        "a_index": np.asarray(a.index_, dtype=np.int32),
        "a_value": np.asarray(a.value_, dtype=np.float64),
        "integrality": np.asarray([int(t) for t in lp.integrality_], dtype=np.uint8),
    }


#: The child's command; tests replace it with one that never answers. ``-P`` (Python 3.11): the script's own
#: folder is not put on ``sys.path``, so no module of ``formulations/`` can shadow one the child imports.
CHILD_COMMAND: list[str] = [sys.executable, "-P", os.path.abspath(__file__)]


def write_inputs(folder: str, h: Any, options: dict[str, Any], start: tuple[Any, Any] | None) -> None:
    """What the child reads from ``folder``: the model ``h`` holds, the MIP start, and the HiGHS options."""
    arrays = _lp_arrays(h)
    if start is not None:
        arrays["start_index"] = np.asarray(start[0], dtype=np.int32)
        arrays["start_value"] = np.asarray(start[1], dtype=np.float64)
    np.savez(os.path.join(folder, "model.npz"), **arrays)
    with open(os.path.join(folder, "options.json"), "w", encoding="utf-8") as f:
        json.dump(options, f)


def solve_in_child(h: Any, options: dict[str, Any], *, time_limit: float, start: tuple[Any, Any] | None = None,
                   tee: bool = False) -> ChildOutcome:
    """Solve the model ``h`` (a ``highspy.Highs`` holding it) in a child process within ``time_limit`` s.

    ``options``: HiGHS options by name (time_limit among them is replaced by ``time_limit``); ``start``: a
    MIP start as (column indices, values). Waits at most ``time_limit + grace_s(time_limit)``, then kills the
    child and returns its last improving solution, if any, as ``killed``.
    """
    folder = tempfile.mkdtemp(prefix="edgeopt-highs-")
    proc = None
    try:
        time_limit = max(0.0, float(time_limit))  # HiGHS ignores a negative limit (and would run unlimited)
        write_inputs(folder, h, {**options, "time_limit": time_limit}, start)
        out = None if tee else subprocess.DEVNULL
        proc = subprocess.Popen([*CHILD_COMMAND, folder, str(os.getpid())], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out)
        try:
            proc.wait(timeout=time_limit + grace_s(time_limit))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return _last_incumbent(folder)
        answer = os.path.join(folder, "answer.npz")
        if proc.returncode != 0 or not os.path.exists(answer):  # killed from outside, out of memory, ...
            return ChildOutcome(f"died (exit code {proc.returncode})", None, None, None)
        with np.load(answer, allow_pickle=False) as z:
            status = str(z["status"])
            has = bool(z["has"])
            return ChildOutcome(status, float(z["objective"]) if has else None, _maybe(float(z["bound"])),
                                z["col_value"].copy() if has else None)
    finally:
        if proc is not None and proc.poll() is None:  # Ctrl-C, SIGTERM or an error while waiting
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _maybe(x: float) -> float | None:
    return x if np.isfinite(x) else None


def _last_incumbent(folder: str) -> ChildOutcome:
    """The killed child's last improving solution, or none."""
    path = os.path.join(folder, "incumbent.npz")
    if not os.path.exists(path):
        return ChildOutcome("killed", None, None, None)
    with np.load(path, allow_pickle=False) as z:
        return ChildOutcome("killed", float(z["objective"]), _maybe(float(z["bound"])), z["col_value"].copy())


def _save_atomically(path: str, **arrays: Any) -> None:
    """Write an ``.npz`` so that a reader sees either the old file or the whole new one (the parent may kill
    the writer at any moment)."""
    tmp = path + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this process when its parent dies (a parent killed by SIGKILL cannot kill
    its child itself); elsewhere the child ends at HiGHS's own time limit."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def child_main(folder: str, parent: int | None = None) -> int:
    """The child: load the model and options, solve, write the answer. ``parent``: the pid to die with."""
    if parent is not None:
        _die_with_parent(parent)
    import highspy

    with np.load(os.path.join(folder, "model.npz"), allow_pickle=False) as z:
        a = {k: z[k] for k in z.files}
    with open(os.path.join(folder, "options.json"), encoding="utf-8") as f:
        opts = json.load(f)
    num_col, num_row, fmt, sense = (int(x) for x in a["num"])
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = num_col, num_row
    lp.offset_ = float(a["offset"][0])
    lp.sense_ = highspy.ObjSense(sense)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = a["col_cost"], a["col_lower"], a["col_upper"]
    lp.row_lower_, lp.row_upper_ = a["row_lower"], a["row_upper"]
    lp.a_matrix_.format_ = highspy.MatrixFormat(fmt)
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = num_col, num_row
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a["a_start"], a["a_index"], a["a_value"]
    if len(a["integrality"]):
        lp.integrality_ = [highspy.HighsVarType(int(t)) for t in a["integrality"]]
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(opts.pop("output_flag", False)))
    h.passModel(lp)
    for key, value in opts.items():
        h.setOptionValue(key, value)
    if "start_index" in a:
        h.setSolution(len(a["start_index"]), a["start_index"], a["start_value"])
    incumbent = os.path.join(folder, "incumbent.npz")

    def improving(event: Any) -> None:
        out = event.data_out
        _save_atomically(incumbent, objective=float(out.objective_function_value),
                         bound=float(out.mip_dual_bound), col_value=np.asarray(out.mip_solution, dtype=np.float64))

    if len(a["integrality"]) and a["integrality"].any():
        h.cbMipImprovingSolution.subscribe(improving)
    h.run()
    info = h.getInfo()
    status = h.getModelStatus().name
    has = info.primal_solution_status == 2
    sol = h.getSolution()
    col_value = np.asarray(sol.col_value, dtype=np.float64) if has else np.zeros(0)
    # an LP (no MIP nodes, count -1) has no dual bound of its own: its optimum is the bound
    bound = info.mip_dual_bound if info.mip_node_count != -1 else (info.objective_function_value if has and status == "kOptimal"
                                                else float("nan"))
    _save_atomically(os.path.join(folder, "answer.npz"), status=np.array(status), has=np.array(has),
                     objective=np.array(float(info.objective_function_value) if has else float("nan")),
                     bound=np.array(float(bound)), col_value=col_value)
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None))
