"""The import graph (docs/architecture.md): a wing imports only wings below it, and the
scripts and the test helpers import each other in no circle.

Every module of dbt/adapters/jammi is parsed with ``ast``; each ``dbt.adapters.jammi``
import (at module level or inside a function) must name a known wing or top-level module
in a layer at or below the importing module's own, and none may import scripts/ or
tests/. scripts/*.py (which import each other by bare name, scripts/ being on their
path) and the test helpers (the modules of tests/ that are not tests: conftest.py,
harness.py, util.py, ...) are parsed the same way: their imports of one another form no
circle, a script imports no test module, and a helper imports no test file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt" / "adapters" / "jammi"
ROOT = "dbt.adapters.jammi"

# lowest first; a unit (a wing folder or a top-level module) may import its own layer and
# the layers before it, never one after it
LAYERS: list[set[str]] = [
    {"common"},
    {"credentials", "__version__"},
    {"engine"},
    {"tenancy"},
    {"python_models"},
    {"topic"},
    {"mutable_table"},
    {"unit_testing"},
    {"impl", "connections", "__init__"},
]
LAYER_OF = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """``dbt.adapters.jammi.topic.publish`` -> ``topic``; the package itself -> ``__init__``."""
    rest = module[len(ROOT) :].lstrip(".")
    return rest.split(".")[0] if rest else "__init__"


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join((ROOT, *parts))


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == ROOT:  # from dbt.adapters.jammi import x -> the unit x
                found += [(node.lineno, f"{ROOT}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, target))
    return found


def package_imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    found = imported_modules(tree, module, is_package)
    return [(line, name) for line, name in found if name == ROOT or name.startswith(ROOT + ".")]


def violations(package: Path = PACKAGE, outside: frozenset[str] = frozenset()) -> list[str]:
    """Layer breaks of ``package``; ``outside``: top-level names it may not import
    (tests, and the scripts, which are modules by their bare names)."""
    problems = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        unit = unit_of(module)
        if unit not in LAYER_OF:
            problems.append(f"{path.relative_to(package)}: not in any layer (add it to LAYERS)")
            continue
        tree = ast.parse(path.read_text(), str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py"):
            if target.split(".")[0] not in outside and not target.startswith(ROOT):
                continue
            target_unit = unit_of(target)
            where = f"{path.relative_to(package)}:{line} imports {target}"
            if target.split(".")[0] in outside:
                problems.append(f"{where}: the package imports scripts/ or tests/")
            elif target_unit not in LAYER_OF:
                problems.append(f"{where}: not a known wing or module")
            elif LAYER_OF[target_unit] > LAYER_OF[unit]:
                problems.append(f"{where}: {target_unit} is above {unit}")
    return problems


def test_no_wing_imports_one_above_it() -> None:
    assert violations(outside=frozenset({"tests", *script_modules(REPO / "scripts")})) == []


@pytest.mark.parametrize(
    "where, source, message",
    [
        ("engine/bad.py", "from dbt.adapters.jammi.topic.publish import x\n", "above"),
        ("common/bad.py", "from dbt.adapters.jammi import impl\n", "above"),
        ("tenancy/bad.py", "def f():\n    from dbt.adapters.jammi.nowhere import x\n", "known"),
        ("topic/bad.py", "from ..mutable_table import definition\n", "above"),
    ],
)
def test_a_bad_import_is_caught(tmp_path: Path, where: str, source: str, message: str) -> None:
    package = tmp_path / "jammi"
    for wing in ("common", "engine", "tenancy", "topic", "mutable_table"):
        (package / wing).mkdir(parents=True)
        (package / wing / "__init__.py").write_text("")
    (package / where).write_text(source)
    found = violations(package)
    assert len(found) == 1 and message in found[0], found


# --- scripts/ and the test helpers ---------------------------------------------------


def script_modules(scripts: Path) -> dict[str, Path]:
    """scripts/*.py by the bare name they import each other by."""
    return {path.stem: path for path in sorted(scripts.glob("*.py"))}


def modules_under(tests: Path, root: Path) -> dict[str, Path]:
    """Every module under ``tests``, by its dotted name from ``root``."""
    modules = {}
    for path in sorted(tests.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def is_test_file(path: Path) -> bool:
    return path.name.startswith("test_")


def import_graph(modules: dict[str, Path]) -> dict[str, list[tuple[int, str]]]:
    """Each module's imports of the other modules (a ``from a import b`` of a module
    ``a.b`` counts as an import of ``a.b``)."""
    graph: dict[str, list[tuple[int, str]]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = []
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges.append((node.lineno, target))
        graph[name] = edges
    return graph


def circles(graph: dict[str, list[tuple[int, str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for _, target in graph[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def script_and_helper_problems(root: Path = REPO) -> list[str]:
    scripts = script_modules(root / "scripts")
    tests = modules_under(root / "tests", root)
    modules = {**{n: p for n, p in tests.items() if n not in scripts}, **scripts}
    graph = import_graph(modules)
    problems = [f"import circle: {' -> '.join(c)}" for c in circles(graph)]
    for name, edges in graph.items():
        where = modules[name].relative_to(root)
        for line, target in edges:
            if name in scripts and target in tests:
                problems.append(f"{where}:{line} imports {target}: a script imports a test module")
            elif not is_test_file(modules[name]) and is_test_file(modules[target]):
                problems.append(f"{where}:{line} imports {target}: a helper imports a test file")
    return problems


def test_scripts_and_test_helpers_import_in_no_circle() -> None:
    assert script_and_helper_problems() == []


@pytest.mark.parametrize(
    "files, message",
    [
        (
            {
                "scripts/server.py": "def main():\n    from lane import run\n",
                "scripts/lane.py": "from server import ROOT\n",
            },
            "import circle: lane -> server",
        ),
        (
            {
                "tests/helper.py": "from tests.other import x\n",
                "tests/other.py": "import tests.helper\n",
            },
            "import circle: tests.helper -> tests.other",
        ),
        ({"tests/helper.py": "from tests.test_a import x\n", "tests/test_a.py": ""}, "test file"),
        ({"scripts/tool.py": "from tests.helper import x\n", "tests/helper.py": ""}, "script"),
    ],
)
def test_a_circle_or_a_wrong_way_import_is_caught(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    for where in ("scripts", "tests"):
        (tmp_path / where).mkdir()
    for where, source in files.items():
        (tmp_path / where).write_text(source)
    found = script_and_helper_problems(tmp_path)
    assert len(found) == 1 and message in found[0], found


def test_the_package_importing_a_script_is_caught(tmp_path: Path) -> None:
    package = tmp_path / "jammi"
    (package / "engine").mkdir(parents=True)
    (package / "engine" / "__init__.py").write_text("")
    (package / "engine" / "bad.py").write_text("def f():\n    import thrift_lane\n")
    found = violations(package, outside=frozenset({"tests", "thrift_lane"}))
    assert len(found) == 1 and "scripts/ or tests/" in found[0], found


# --- the layers inside mutable_table/ --------------------------------------------------

# Lowest first, by module (a folder's modules may sit in different layers); a module may
# import its own layer and the layers before it, type-checking imports included
# (docs/architecture.md, "Layers inside mutable_table/").
MUTABLE_LAYERS: list[tuple[str, set[str]]] = [
    (
        "values: what a definition, a plan and a commit are made of, no statements",
        set(
            """__init__ commit rules versions adoption column_types compared_values
            exact_casts hive_adoption indexes key_decisions redelivery run_definition run_errors
            scd2 schema_evolution table_format tblproperties_config version_locations
            commit.attempt commit.ownership commit.transaction rules.version_sql
            versions.kept_versions""".split()
        ),
    ),
    (
        "the definition and the row rules' declarations: options, validation, SQL text",
        set(
            """definition definition_change iceberg_support rule_columns run_config
            schema_reconciliation table_properties table_records rules.batch_rewrites
            rules.changelog rules.changelog_sql rules.identity rules.merge_functions
            rules.registry rules.tombstones rules.truncates rules.ttl
            rules.version_group_batch rules.version_groups versions.iceberg_expiry
            versions.version_reads""".split()
        ),
    ),
    (
        "the commit paths and the rules' phases: statements in order, over given callables",
        set(
            """format_reads planner_rules run_start commit.branch_commit commit.iceberg_merge
            commit.leftovers
            commit.merge_commit commit.rewrite_commit commit.run_plan
            rules.changelog_feeds rules.changelog_iceberg rules.changelog_phases
            rules.identity_phases
            rules.tombstone_phases versions.iceberg_snapshots
            versions.kept_version_phases""".split()
        ),
    ),
    (
        "the services: each given the SQL interface and the services it uses",
        set(
            """drift_service session_formats steps table_state commit.commit_service
            commit.version_commit rules.rules_service versions.versions_service""".split()
        ),
    ),
    (
        "the run's services, which the face hands its calls to",
        {"apply_service", "rollback_service", "run_service"},
    ),
]
MUTABLE = f"{ROOT}.mutable_table"


def mutable_layer_breaks(package: Path = PACKAGE / "mutable_table") -> list[str]:
    """Imports inside mutable_table/ that go to a later layer, and modules in no layer."""
    layer_of = {name: i for i, (_, names) in enumerate(MUTABLE_LAYERS) for name in names}
    problems = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)
        if name not in layer_of:
            problems.append(f"mutable_table/{name}: in no layer (add it to MUTABLE_LAYERS)")
            continue
        module = f"{MUTABLE}.{name}" if name != "__init__" else MUTABLE
        tree = ast.parse(path.read_text(), str(path))
        for line, inner in mutable_imports(tree, module, path.name == "__init__.py"):
            target_layer = layer_of.get(inner)
            if target_layer is not None and target_layer > layer_of[name]:
                problems.append(
                    f"mutable_table/{name}:{line} imports {inner}, a later layer "
                    f"({MUTABLE_LAYERS[target_layer][0].split(':')[0]})"
                )
    return problems


def mutable_imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """The modules of mutable_table/ a module imports, by their names inside it: a
    ``from mutable_table.rules import ttl`` names both ``rules`` and ``rules.ttl``."""
    found = []
    for line, target in imported_modules(tree, module, is_package):
        if target.startswith(MUTABLE + "."):
            found.append((line, target[len(MUTABLE) + 1 :]))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == MUTABLE or node.module.startswith(MUTABLE + "."):
                inner = node.module[len(MUTABLE) + 1 :]
                for alias in node.names:
                    found.append((node.lineno, f"{inner}.{alias.name}".lstrip(".")))
    return found


def test_no_module_of_mutable_table_imports_a_later_layer() -> None:
    assert mutable_layer_breaks() == []


def test_an_import_of_a_later_layer_is_caught(tmp_path: Path) -> None:
    package = tmp_path / "mutable_table"
    (package / "rules").mkdir(parents=True)
    for name in ("__init__.py", "rules/__init__.py", "run_service.py", "rules/ttl.py"):
        (package / name).write_text("")
    (package / "definition.py").write_text(
        "from dbt.adapters.jammi.mutable_table.rules import ttl\n"
        "from dbt.adapters.jammi.mutable_table import run_service\n"
    )
    assert mutable_layer_breaks(package) == [
        "mutable_table/definition:2 imports run_service, a later layer (the run's services, "
        "which the face hands its calls to)"
    ]
