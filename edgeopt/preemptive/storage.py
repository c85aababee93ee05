"""Storage bookkeeping of Sec. VI for the baselines: (7b) with chunk d stored on its server during [r_j, c_jd).

A booking is opened when a chunk is placed (from r_j) and closed when its completion is known; an open
booking counts as stored forever. `fits` asks whether ``extra`` MB more, stored from ``start`` on, keep the
server within U_s at every slot >= ``start`` (a conservative check when the new chunks end earlier).
"""

from __future__ import annotations

from edgeopt.preemptive.instance import Instance

INF = 1 << 62


class StorageBook:
    def __init__(self, instance: Instance) -> None:
        self.cap = [sv.storage_mb for sv in instance.servers]
        self.items: dict[int, list[list[float]]] = {}  # server -> [start, end, mb]

    def fits(self, s: int, start: int, extra: float) -> bool:
        cap = self.cap[s]
        if cap is None or extra == 0:
            return True
        events: list[tuple[float, float]] = []
        for a, b, u in self.items.get(s, []):
            if b > start:
                events.append((max(a, start), u))
                events.append((b, -u))
        events.sort(key=lambda e: (e[0], e[1]))  # releases before new storage at the same slot
        used = peak = 0.0
        for _, delta in events:
            used += delta
            peak = max(peak, used)
        return peak + extra <= cap + 1e-9

    def open(self, s: int, start: int, mb: float, end: int | None = None) -> list[float]:
        item = [float(start), float(INF if end is None else end), float(mb)]
        if self.cap[s] is not None:
            self.items.setdefault(s, []).append(item)
        return item

    @staticmethod
    def close(item: list[float], end: int) -> None:
        item[1] = float(end)
