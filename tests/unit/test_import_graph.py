"""The package's layering (docs/architecture.md): a wing imports only wings below it.

Every module of dbt/adapters/jammi is parsed with ``ast``; each ``dbt.adapters.jammi``
import (at module level or inside a function) must name a known wing or top-level module
in a layer at or below the importing module's own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "dbt" / "adapters" / "jammi"
ROOT = "dbt.adapters.jammi"

# lowest first; a unit (a wing folder or a top-level module) may import its own layer and
# the layers before it, never one after it
LAYERS: list[set[str]] = [
    {"common"},
    {"credentials", "__version__"},
    {"engine"},
    {"tenancy"},
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
    return [(line, name) for line, name in found if name == ROOT or name.startswith(ROOT + ".")]


def violations(package: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        unit = unit_of(module)
        if unit not in LAYER_OF:
            problems.append(f"{path.relative_to(package)}: not in any layer (add it to LAYERS)")
            continue
        tree = ast.parse(path.read_text(), str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py"):
            target_unit = unit_of(target)
            where = f"{path.relative_to(package)}:{line} imports {target}"
            if target_unit not in LAYER_OF:
                problems.append(f"{where}: not a known wing or module")
            elif LAYER_OF[target_unit] > LAYER_OF[unit]:
                problems.append(f"{where}: {target_unit} is above {unit}")
    return problems


def test_no_wing_imports_one_above_it() -> None:
    assert violations() == []


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
