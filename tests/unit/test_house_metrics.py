"""scripts/house_metrics.py's measures, each read off a small source whose answer is
known (docs/architecture.md, "How the house is measured")."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).parents[2] / "scripts"


def load_house_metrics():
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("house_metrics", SCRIPTS / "house_metrics.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["house_metrics"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


house = load_house_metrics()
ROOT = house.ROOT


def first_function(source: str) -> ast.FunctionDef:
    return next(house.functions([ast.parse(source)]))


def test_parameters_are_counted_without_self_and_with_star_arguments():
    assert house.parameter_count(first_function("def f(self, a, b, /, c, *d, e, **f): pass")) == 6
    assert house.parameter_count(first_function("def f(cls): pass")) == 0


def test_a_file_format_test_is_a_comparison_of_the_format_not_of_the_key():
    source = """
if file_format == "delta": pass
if self.file_format in ("delta", "iceberg"): pass
if topic["file_format"] != "iceberg": pass
if topic.get("file_format") not in FORMATS: pass
if "file_format" in config: pass
if fmt == "delta": pass
if file_format: pass
"""
    assert house.file_format_tests(ast.parse(source)) == 4


def test_components_of_more_than_one_module_are_the_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert house.strongly_connected(graph) == [["a", "b", "c"]]


def test_imports_resolve_relative_names_and_modules_imported_from_packages():
    known = {f"{ROOT}.topic", f"{ROOT}.topic.publish", f"{ROOT}.topic.staging", f"{ROOT}.common"}
    tree = ast.parse(
        "from . import staging\n"
        "from ..common import columns\n"
        "if TYPE_CHECKING:\n"
        "    from dbt.adapters.jammi.topic import publish\n"
        "import os\n"
    )
    module = f"{ROOT}.topic.publish"
    path = house.PACKAGE / "topic" / "publish.py"
    # publish importing itself is no arrow; `columns` is no module here, so `common` is
    assert house.imports_of(module, path, tree, known) == {
        f"{ROOT}.topic.staging",
        f"{ROOT}.common",
    }


def test_mutable_table_folders_that_import_each_other_both_ways_are_counted_once():
    mt = f"{ROOT}.mutable_table"
    graph = {
        f"{mt}.run_service": {f"{mt}.commit.merge_commit"},
        f"{mt}.commit.merge_commit": {f"{mt}.definition", f"{mt}.rules.registry"},
        f"{mt}.definition": set(),
        f"{mt}.rules.registry": set(),
        f"{ROOT}.topic.publish": {f"{mt}.definition"},
    }
    assert house.folders_both_ways(graph) == 1
    graph[f"{mt}.rules.registry"] = {f"{mt}.commit.merge_commit"}
    assert house.folders_both_ways(graph) == 2


def test_class_depth_counts_only_the_package_own_bases():
    class Base:
        pass

    class Middle(Base):
        pass

    class Leaf(Middle, dict):
        pass

    assert house.class_depth(Leaf, {Base, Middle, Leaf}) == 3
    assert house.class_depth(Leaf, {Leaf}) == 1
