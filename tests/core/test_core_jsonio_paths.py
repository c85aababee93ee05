"""Paths into a JSON tree (edgeopt.core.jsonio): the helpers the CLI probe and the input tests share."""

from __future__ import annotations

from edgeopt.core.jsonio import get_path, number_paths, set_path, tree_paths


def test_paths_reach_every_node_and_numbers_skip_booleans():
    tree = {"a": [1, {"b": 2.5, "c": True}], "d": "x"}
    assert [p for p, _ in tree_paths(tree)] == [(), ("a",), ("a", 0), ("a", 1), ("a", 1, "b"), ("a", 1, "c"), ("d",)]
    assert number_paths(tree) == [("a", 0), ("a", 1, "b")]
    assert get_path(tree, ("a", 1, "b")) == 2.5
    set_path(tree, ("a", 1, "b"), "changed")
    assert tree["a"][1]["b"] == "changed" and get_path(tree, ()) is tree
