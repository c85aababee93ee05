"""`edgeopt algorithms` lists from a generated copy of the registry (edgeopt/_catalog_data.py) so that it
starts without importing the families; these tests keep the copy and the registry from drifting apart and
check that the copy is set aside whenever it might not equal the registry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgeopt import api, catalog
from edgeopt.families import FAMILY_NAMES

RUN = """
import sys
if {registry!r}:
    import edgeopt.api  # the registry is loaded: `edgeopt algorithms` must read it, not the copy
from edgeopt.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
"""


def test_generated_copy_equals_the_registry():
    """What `python -m edgeopt.catalog --write` would write now is what is committed."""
    out = subprocess.run([sys.executable, "-m", "edgeopt.catalog", "--check"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("argv", [["algorithms"], ["algorithms", "--json"], ["algorithms", "tapfinger"]],
                         ids=["table", "json", "family"])
def test_listing_from_the_copy_equals_the_listing_from_the_registry(argv):
    texts = [subprocess.run([sys.executable, "-c", RUN.format(registry=registry, argv=argv)], capture_output=True,
                            text=True, check=True).stdout for registry in (False, True)]
    assert texts[0] == texts[1]
    assert "cpsat" in texts[0] and "online" in texts[0]


def _without_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `catalog.cached_rows` see a process where no registry was loaded (restored after the test)."""
    monkeypatch.delitem(sys.modules, "edgeopt.core.registry")


def test_copy_is_used_only_when_it_equals_the_registry(monkeypatch):
    assert catalog.cached_rows() is None  # this process loaded the registry (a test may register algorithms)
    builtin = [r for r in catalog.registry_rows(FAMILY_NAMES) if r["kind"] == "exact"
               or api.is_builtin(api.algorithms(r["family"])[r["algorithm"]])]
    _without_registry(monkeypatch)
    assert catalog.cached_rows() == builtin
    assert catalog.cached_rows("okita") == [r for r in builtin if r["family"] == "okita"]
    assert catalog.cached_rows("hetro") is None  # the registry's path gives the "did you mean" error


def test_copy_is_set_aside_for_plugins_and_missing_extras(monkeypatch):
    _without_registry(monkeypatch)
    import edgeopt.plugins

    monkeypatch.setattr(edgeopt.plugins, "discovered", lambda: ["a plug-in"])
    assert catalog.cached_rows() is None
    monkeypatch.undo()
    _without_registry(monkeypatch)
    from edgeopt import _catalog_data

    guard = {**_catalog_data.GUARDS[0], "modules": ["edgeopt_no_such_module"]}
    monkeypatch.setattr(_catalog_data, "GUARDS", [guard])
    assert catalog.cached_rows() is None
    monkeypatch.setattr(_catalog_data, "GUARDS", [{**guard, "modules": [], "files": ["no/such/checkpoint"]}])
    assert catalog.cached_rows() is None
    monkeypatch.setattr(_catalog_data, "GUARDS", [{**guard, "modules": [], "files": []}])
    assert catalog.cached_rows() is not None
    monkeypatch.setattr(_catalog_data, "SOURCES_SHA256", "0" * 64)  # a family's source was edited since
    assert catalog.cached_rows() is None


def test_guards_name_every_optional_algorithm():
    """Each algorithm a guard covers is one the registry has here (the rl extra is installed in the suite)."""
    from edgeopt import _catalog_data

    for guard in _catalog_data.GUARDS:
        assert set(guard["algorithms"]) <= set(api.algorithms(guard["family"]))
