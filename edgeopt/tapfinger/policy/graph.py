"""The heterogeneous state graph G_t of eq. (9), built from the environment's raw entities.

Nodes (features; resource amounts divided by ``feature_scale``, times by ``time_scale``):

* ``cluster`` n: free resources e_{n,t}, capacity, and queue length q_{n,t} / P (eq. 9 concatenates
  e and q; the capacity is added so heterogeneous clusters are told apart);
* ``running`` task j (o_{j,t}): allocation, task-type features, elapsed time, observed progress;
* ``pending`` task j (p_{j,t}), once per task even when it is in several pending sets: minimum
  demand, task-type features, waiting time;
* one ``shortcut`` node with the zero feature of eq. (9).

Edges, both directions of each relation: running j -- cluster n when j runs on n; pending j --
cluster n when j is in P_{n,t}; shortcut -- every cluster. Only the first two resources (CPU, GPU)
are encoded. Task-type features (``PolicyConfig.task_features``): the paper's one-hot of the two
synthetic types, or the type's profile (`type_features`), which lets one policy run on instances with any
number of types (trace-driven ones).

A `StepGraph` also maps each agent to its pending set (``agent_pending[n, k]`` = the pending node of
slot k, -1 for a padded slot), so the actors read their pending tasks' embeddings (Sec. IV-B: "we
map G^P to the corresponding agents"). Graphs are batched by concatenation with offsets (`batch`),
which is all `HANConv` needs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from edgeopt.tapfinger.policy.config import PolicyConfig

NODE_TYPES = ["cluster", "running", "pending", "shortcut"]
EDGE_TYPES = [
    ("running", "runs_on", "cluster"), ("cluster", "hosts", "running"),
    ("pending", "queued_at", "cluster"), ("cluster", "sees", "pending"),
    ("shortcut", "links", "cluster"), ("cluster", "linked", "shortcut"),
]
METADATA = (NODE_TYPES, EDGE_TYPES)
#: width of a task's type features: the one-hot of the paper's two synthetic types, or the two numbers of
#: `edgeopt.tapfinger.env.type_profile` (``PolicyConfig.task_features``)
TASK_TYPES = 2


def feature_dims(cfg: PolicyConfig | None = None) -> dict[str, int]:
    """Node feature widths (the cluster's grows by one with ``cfg.agent_index``)."""
    cluster = 5 + int(cfg is not None and cfg.agent_index)
    return {"cluster": cluster, "running": 2 + TASK_TYPES + 2, "pending": 2 + TASK_TYPES + 1, "shortcut": 1}


@dataclasses.dataclass
class StepGraph:
    """One timestep's graph (or a batch of them) and each agent's pending-slot map."""

    x: dict[str, torch.Tensor]
    edges: dict[tuple[str, str, str], torch.Tensor]
    agent_pending: torch.Tensor  # (A, P) long, -1 = padded
    agent_cluster: torch.Tensor  # (A,) long


def _onehot(types: np.ndarray) -> np.ndarray:
    out = np.zeros((len(types), TASK_TYPES), np.float32)
    if len(types):
        out[np.arange(len(types)), np.minimum(types, TASK_TYPES - 1)] = 1.0
    return out


def type_features(types: np.ndarray, entities: dict[str, np.ndarray], cfg: PolicyConfig) -> np.ndarray:
    """The type features of tasks of ``types``: a one-hot (``onehot``; at most `TASK_TYPES` types), or
    the type's profile (``profile``: log(1 + timesteps) / log(1 + time_scale) at its minimum and at a
    full cluster), which any number of types has."""
    if cfg.task_features == "onehot":
        return _onehot(types)
    prof = np.asarray(entities["type_profile"], np.float32).reshape(-1, TASK_TYPES)
    return (np.log1p(prof[np.asarray(types, np.int64)]) / np.log1p(cfg.time_scale)).astype(np.float32)


@dataclasses.dataclass
class GraphArrays:
    """G_t of one timestep as numpy arrays: what both encoder backends (PyG, dense) are built from.

    ``run_cluster[r]`` is running node r's cluster; ``pend_edges`` (2, E) are (pending row, cluster)
    pairs; ``agent_pending[n, k]`` the pending row of agent n's slot k (-1 = padded).
    """

    cluster: np.ndarray  # (N, 5) float32
    running: np.ndarray  # (R, 6) float32
    pending: np.ndarray  # (Pn, 5) float32
    run_cluster: np.ndarray  # (R,) int64
    pend_edges: np.ndarray  # (2, E) int64
    agent_pending: np.ndarray  # (N, P) int64


def graph_arrays(entities: dict[str, np.ndarray], pending_tasks: list[list[int]], cfg: PolicyConfig) -> GraphArrays:
    """The node features and connectivity of G_t from `TapFingerEnv.entities` and each agent's pending ids."""
    s, ts, P = cfg.feature_scale, cfg.time_scale, cfg.pending_size
    cap = entities["cluster_capacity"][:, :2].astype(np.float32)
    free = entities["cluster_free"][:, :2].astype(np.float32)
    N = len(cap)
    parts = [free / s, cap / s, entities["cluster_queue"][:, None] / P]
    if cfg.agent_index:  # the agent's index, for agents told apart by their order (not in eq. 9)
        parts.append(np.arange(N, dtype=np.float32)[:, None] / cfg.max_clusters)
    cluster = np.concatenate(parts, axis=1)
    running = np.concatenate([
        entities["running_alloc"][:, :2] / s, type_features(entities["running_type"], entities, cfg),
        entities["running_elapsed"][:, None] / ts, entities["running_progress"][:, None]], axis=1)
    pending = np.concatenate([
        entities["pending_min"][:, :2] / s, type_features(entities["pending_type"], entities, cfg),
        entities["pending_wait"][:, None] / ts], axis=1)
    row = {int(j): r for r, j in enumerate(entities["pending_task"])}
    agent_pending = np.full((N, P), -1, np.int64)
    for n, tasks in enumerate(pending_tasks):
        for k, j in enumerate(tasks[:P]):
            agent_pending[n, k] = row[int(j)]
    dims = feature_dims(cfg)

    def f(a: np.ndarray, kind: str) -> np.ndarray:
        return np.asarray(a, np.float32).reshape(len(a), dims[kind])

    return GraphArrays(f(cluster, "cluster"), f(running, "running"), f(pending, "pending"),
                       np.asarray(entities["running_cluster"], np.int64).reshape(-1),
                       entities["pending_edges"].astype(np.int64).reshape(2, -1), agent_pending)


def to_step_graph(a: GraphArrays) -> StepGraph:
    """The PyG form of `GraphArrays` (edge lists per relation, both directions)."""
    N = len(a.cluster)
    run_edge = np.stack([np.arange(len(a.running)), a.run_cluster]).astype(np.int64)
    short_edge = np.stack([np.zeros(N, np.int64), np.arange(N)])

    def e(x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x.copy(), dtype=torch.long).reshape(2, -1)

    x = {"cluster": torch.as_tensor(a.cluster), "running": torch.as_tensor(a.running),
         "pending": torch.as_tensor(a.pending), "shortcut": torch.zeros(1, 1)}
    edges = {
        EDGE_TYPES[0]: e(run_edge), EDGE_TYPES[1]: e(run_edge[::-1]),
        EDGE_TYPES[2]: e(a.pend_edges), EDGE_TYPES[3]: e(a.pend_edges[::-1]),
        EDGE_TYPES[4]: e(short_edge), EDGE_TYPES[5]: e(short_edge[::-1]),
    }
    return StepGraph(x, edges, torch.as_tensor(a.agent_pending), torch.arange(N))


def build_graph(entities: dict[str, np.ndarray], pending_tasks: list[list[int]], cfg: PolicyConfig) -> StepGraph:
    """G_t from `TapFingerEnv.entities` and every agent's pending task ids (slot order), in PyG form."""
    return to_step_graph(graph_arrays(entities, pending_tasks, cfg))


def batch(graphs: list[StepGraph]) -> StepGraph:
    """Concatenate graphs into one disconnected graph (node indices offset per graph)."""
    offs = dict.fromkeys(NODE_TYPES, 0)
    xs: dict[str, list] = {t: [] for t in NODE_TYPES}
    es: dict[tuple, list] = {et: [] for et in EDGE_TYPES}
    ap, ac = [], []
    for g in graphs:
        for et in EDGE_TYPES:
            src, _, dst = et
            es[et].append(g.edges[et] + torch.tensor([[offs[src]], [offs[dst]]]))
        ap.append(torch.where(g.agent_pending >= 0, g.agent_pending + offs["pending"], -1))
        ac.append(g.agent_cluster + offs["cluster"])
        for t in NODE_TYPES:
            xs[t].append(g.x[t])
            offs[t] += len(g.x[t])
    return StepGraph({t: torch.cat(v) for t, v in xs.items()}, {et: torch.cat(v, 1) for et, v in es.items()},
                     torch.cat(ap), torch.cat(ac))
