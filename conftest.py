"""Suite-wide pytest hooks: the order in which the test files run.

`make test` runs the suite on two worker processes, one test file or notebook per work unit
(``--dist loadfile``), handed out in collection order (``--no-loadscope-reorder``; by default xdist orders
the units by their number of tests, which put the notebooks and the wheel test, one long test each,
last). Here the files are ordered longest first, by the seconds one run measured (`tests/durations.json`,
rewritten by ``tests/update_durations.py`` from a ``--durations=0`` log), so that the short files come
last and the two workers finish together (longest processing time first). The order of the tests inside
a file does not change, and no test depends on the order of files.

Compiling the numba kernels: in a fresh clone each worker process compiled hetero's and edgecloud's kernels
itself on its first use (about 36 s and 15 s of CPU each, the same work twice). The controller of a
parallel run starts one process per family that compiles them into numba's on-disk cache while the
workers collect the tests (about 24 s); a worker that needs a kernel afterwards loads it from the cache,
and one that needs it earlier compiles it as before. Nothing depends on it but the time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: Seconds assumed for a file the durations do not list yet (a new file): about the median file.
UNKNOWN_S = 2.0


def file_seconds() -> dict[str, float]:
    path = ROOT / "tests" / "durations.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def pytest_collection_modifyitems(session, config, items):
    seconds = file_seconds()

    def rel(item) -> str:
        return Path(str(item.path)).resolve().relative_to(ROOT).as_posix()

    items.sort(key=lambda item: -seconds.get(rel(item), UNKNOWN_S))  # stable: a file's tests keep their order


#: What compiles each family's kernels: its online algorithm on small instances (hetero's with each
#: architecture), and edgecloud's offline_fill.
WARM_UP = {
    "hetero": "from edgeopt import api\n"
              "for preset in ('small', 'small_ra'):\n"
              "    api.run('online', api.generate('hetero', preset, seed=0))\n",
    "edgecloud": "from edgeopt import api\n"
                 "inst = api.generate('edgecloud', 'small', seed=0)\n"
                 "api.run('online', inst)\n"
                 "api.run('offline_fill', inst)\n",
}
_warming: list[subprocess.Popen] = []


def pytest_configure(config):
    parallel = (config.getoption("numprocesses", None) or 0) and not hasattr(config, "workerinput")
    if parallel:
        for code in WARM_UP.values():
            _warming.append(subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL))


def pytest_unconfigure(config):
    while _warming:
        proc = _warming.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
