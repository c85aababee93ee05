"""Write the notebooks (an overview and one per family).

Run from the repository root: ``.venv/bin/python notebooks/build_notebooks.py``.
`make test` executes every notebook with nbmake, so they must stay quick.
"""
import sys

import nbformat as nbf

sys.path.insert(0, ".")
from edgeopt import api


def nb(cells):
    book = nbf.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    out = []
    for k, (kind, src) in enumerate(cells):
        cell = nbf.v4.new_markdown_cell(src) if kind == "md" else nbf.v4.new_code_cell(src)
        cell["id"] = f"cell-{k:02d}"
        out.append(cell)
    book.cells = out
    return book


def family_notebook(spec):
    f = spec.name
    return nb([
        ("md", f"# `{f}`: {spec.paper}\n\nA tour of the family: generate an instance, run the paper's online "
               "algorithm and its baselines, validate every schedule, solve the offline problem exactly, and "
               "measure competitive ratios. Objective: " + spec.objective_name + " (lower is better)."),
        ("code", "import statistics\nimport time\n\nfrom edgeopt import api\n\n"
                 f"inst = api.generate({f!r}, 'small', seed=0)\n"
                 "print(f'{len(inst.jobs)} jobs, horizon {inst.horizon} slots')\n"
                 "print('algorithms:', ', '.join(api.algorithms(inst.family)))\n"
                 "print('exact models:', ', '.join(api.exact_methods(inst.family)))"),
        ("md", "## The paper's online algorithm\nEvery result goes through the family's validator: an empty list means valid."),
        ("code", "res = api.run('online', inst)\nprint(res.status.value, res.objective, f'{res.runtime_s:.3f} s')\n"
                 "violations = api.validate(inst, res)\nassert not violations, violations\nviolations"),
        ("md", "## The offline optimum\nThe MILP (Pyomo + HiGHS) and the CP-SAT model are independent; they must agree."),
        ("code", "opt = api.solve(inst, method='milp', time_limit=30)\n"
                 "print('milp ', opt.status.value, opt.objective, opt.bound, f'{opt.runtime_s:.2f} s')\n"
                 "if 'cpsat' in api.exact_methods(inst.family):\n"
                 "    cp = api.solve(inst, method='cpsat', time_limit=30)\n"
                 "    print('cpsat', cp.status.value, cp.objective, cp.bound, f'{cp.runtime_s:.2f} s')\n"
                 "    assert abs(cp.objective - opt.objective) <= 1e-6 * max(1, abs(opt.objective))\n"
                 "print('online / optimum =', res.objective / opt.objective)"),
        ("md", "## Every algorithm side by side"),
        ("code", "table = api.compare(inst, optimal=True, time_limit=30)\n"
                 "for row in table.rows:\n"
                 "    ratio = '-' if row.ratio is None else f'{row.ratio:.4f}'\n"
                 "    note = ' (relaxed model)' if row.relaxed else ''\n"
                 "    print(f'{row.algorithm:12s} {row.status:10s} {row.objective:12.6g}  ratio {ratio}  valid {row.valid}{note}')\n"
                 "    assert row.valid\n"
                 "import pathlib\nimport tempfile\n\nfrom IPython.display import Image\n\n"
                 "png = pathlib.Path(tempfile.mkdtemp()) / 'comparison.png'\n"
                 "table.plot(png)\nImage(str(png))"),
        ("md", "## Competitive ratio over seeds"),
        ("code", "ratios = {}\nfor seed in range(5):\n"
                 f"    i = api.generate({f!r}, 'small', seed=seed)\n"
                 "    t = api.compare(i, optimal=True, time_limit=30)\n"
                 "    for row in t.rows:\n"
                 "        if row.kind != 'exact' and row.ratio is not None:\n"
                 "            ratios.setdefault(row.algorithm, []).append(row.ratio)\n"
                 "for name, rs in ratios.items():\n"
                 "    print(f'{name:12s} mean {statistics.mean(rs):.3f}  max {max(rs):.3f}')"),
        ("md", "## The paper's scale\nThe online algorithm on the paper preset (fewer jobs here to keep the notebook quick)."),
        ("code", f"big = api.generate({f!r}, 'paper', seed=0, jobs=100)\n"
                 "t0 = time.perf_counter()\nbig_res = api.run('online', big)\n"
                 "print(big_res.status.value, big_res.objective, f'{time.perf_counter() - t0:.2f} s for {len(big.jobs)} jobs')\n"
                 "assert not api.validate(big, big_res)"),
    ])


def overview():
    return nb([
        ("md", "# edgeopt overview\n\nEvery implemented family on one small instance: each algorithm's objective, "
               "validity and ratio to the certified optimum; then a sweep over seeds on a Dask LocalCluster."),
        ("code", "from edgeopt import api\n\nfor spec in api.families():\n"
                 "    print(f'{spec.name:11s} {spec.paper}')\n"
                 "    print('            algorithms:', ', '.join(api.algorithms(spec.name)), '| exact:', ', '.join(api.exact_methods(spec.name)))"),
        ("code", "for spec in api.families():\n"
                 "    inst = api.generate(spec.name, 'small', seed=0)\n"
                 "    table = api.compare(inst, optimal=bool(api.exact_methods(spec.name)), time_limit=30)\n"
                 "    print(f'\\n{spec.name}: reference = {table.reference_name} {table.reference}')\n"
                 "    for row in table.rows:\n"
                 "        ratio = '-' if row.ratio is None else f'{row.ratio:.4f}'\n"
                 "        print(f'  {row.algorithm:12s} {row.objective:12.6g}  ratio {ratio}  valid {row.valid}')\n"
                 "        assert row.valid"),
        ("md", "## A sweep on Dask\n`run_sweep` starts a `LocalCluster`; pass `address='tcp://scheduler:8786'` for a real cluster."),
        ("code", "from edgeopt.sweep import SweepPoint, run_sweep, summarise\n\n"
                 "family = api.families()[0].name\n"
                 "points = [SweepPoint(family, 'small', seed=s, optimal=True, time_limit=30) for s in range(4)]\n"
                 "rows = run_sweep(points, n_workers=2)\n"
                 "for s in summarise(rows):\n"
                 "    print(s)"),
    ])


def write_executed(book, path: str) -> None:
    """Execute ``book`` (so readers see the outputs on GitHub) and write it."""
    from nbclient import NotebookClient

    NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    nbf.write(book, path)


if __name__ == "__main__":
    write_executed(overview(), "notebooks/overview.ipynb")
    for spec in api.families():
        write_executed(family_notebook(spec), f"notebooks/{spec.name}.ipynb")
    print("written")
