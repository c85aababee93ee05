"""Third-party algorithms through the ``edgeopt.algorithms`` entry point group, and `api.register_algorithm`."""

from __future__ import annotations

import sys
import textwrap
import warnings

import pytest

from edgeopt import api, plugins
from edgeopt.core import unregister

PLUGIN = '''
from edgeopt import api

@api.register_algorithm("edgecloud", "plugin_copy", summary="the online algorithm's schedule, from a plugin")
def plugin_copy(instance, *, repeat: int = 1):
    """Copies `online`.

    Args:
        repeat: how many times to run it (the last one is kept).
    """
    for _ in range(repeat):
        res = api.run("online", instance)
    return res.schedule
'''


def _install(tmp_path, dist: str, module: str, source: str, entry: str) -> None:
    """A tiny installed package: a module and a dist-info with its entry point, on sys.path."""
    (tmp_path / f"{module}.py").write_text(source)
    info = tmp_path / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[edgeopt.algorithms]\n{entry}\n")


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("plugin_copy", "broken_never"):
        unregister("edgecloud", name)
    for mod in ("edgeopt_test_plugin", "edgeopt_broken_plugin"):
        sys.modules.pop(mod, None)
    monkeypatch.undo()  # the test's packages leave sys.path before the reload
    plugins.load_plugins(force=True)  # forget the test's plugins' state


def test_entry_point_plugin_registers_runs_validates_and_compares(plugin_path):
    _install(plugin_path, "edgeopt-test-plugin", "edgeopt_test_plugin", PLUGIN,
             "copy = edgeopt_test_plugin")
    assert "copy" in {ep.name for ep in plugins.discovered()}
    status = plugins.load_plugins(force=True)
    assert status["copy"] == "ok"
    algo = api.algorithms("edgecloud")["plugin_copy"]
    assert algo.kind == "offline" and [p.name for p in algo.params] == ["repeat"]
    assert algo.params[0].help.startswith("how many times")
    inst = api.generate("edgecloud", "small", seed=4)
    res = api.run("plugin_copy", inst, repeat=2)
    assert res.algorithm == "plugin_copy" and api.validate(inst, res) == []
    assert res.objective == api.run("online", inst).objective
    table = api.compare(inst, ["online", "plugin_copy"])
    assert [r.algorithm for r in table.rows] == ["online", "plugin_copy"] and all(r.valid for r in table.rows)


def test_a_broken_plugin_warns_and_is_skipped(plugin_path):
    _install(plugin_path, "edgeopt-broken-plugin", "edgeopt_broken_plugin", "raise RuntimeError('boom')\n",
             "broken = edgeopt_broken_plugin")
    with pytest.warns(UserWarning, match="broken.*boom"):
        status = plugins.load_plugins(force=True)
    assert status["broken"].startswith("RuntimeError")
    assert "online" in api.algorithms("edgecloud")  # edgeopt itself still works


def test_register_algorithm_in_a_cell_re_run_replaces_with_warning_for_a_new_function():
    source = textwrap.dedent('''
        @api.register_algorithm("hetero", "cell_algo")
        def cell_algo(instance):
            """Whatever online does."""
            return api.run("online", instance).schedule
    ''')
    try:
        exec(source, {"api": api, "__name__": "__main__"})  # noqa: S102 - a notebook cell, run twice
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same cell run again: replaced silently
            exec(source, {"api": api, "__name__": "__main__"})  # noqa: S102 - a notebook cell, run twice

        def cell_algo(instance):  # another function under the same name: replaced, with a warning
            return api.run("online", instance).schedule

        with pytest.warns(UserWarning, match="registered again"):
            api.register_algorithm("hetero", "cell_algo")(cell_algo)
        inst = api.generate("hetero", "small", seed=0)
        assert api.validate(inst, api.run("cell_algo", inst)) == []
    finally:
        unregister("hetero", "cell_algo")


def test_register_algorithm_rejects_an_unknown_kind():
    from edgeopt.core import InputError

    with pytest.raises(InputError, match="kind"):
        api.register_algorithm("hetero", "x", kind="onlnie")
