"""How hard the package is to walk into, in the numbers docs/architecture.md tracks:

    python scripts/house_metrics.py            # a table of the measures
    python scripts/house_metrics.py --json     # the same as one JSON object

- the package's own classes in `JammiAdapter`'s method resolution order, and how deep
  the deepest of them sits;
- `# type: ignore[attr-defined]` comments (calls the type checker cannot follow);
- functions that take 7 or more parameters (`self` and `cls` not counted);
- tests of `file_format` (`==`, `!=`, `in`, `not in`) and the files that hold them;
- import circles between the package's modules, imports under `TYPE_CHECKING` counted;
- folder pairs inside `mutable_table/` that import each other both ways;
- Python lines of the package.

Everything but the first is read from the source with `ast`; the first imports
`dbt.adapters.jammi.impl`.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "dbt" / "adapters" / "jammi"
ROOT = "dbt.adapters.jammi"
MANY_PARAMETERS = 7
IGNORE_ATTR = "type: ignore[attr-defined]"


@dataclass(frozen=True)
class HouseMetrics:
    mro_package_classes: int
    mro_deepest_level: int
    type_ignore_attr_defined: int
    functions_with_many_parameters: int
    file_format_tests: int
    file_format_test_files: int
    import_circles: int
    modules_in_circles: int
    mutable_table_folders_both_ways: int
    python_lines: int


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((ROOT, *parts))


def package_sources() -> dict[str, tuple[Path, ast.Module]]:
    sources = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        sources[module_name(path)] = (path, ast.parse(path.read_text(), str(path)))
    return sources


def imports_of(module: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """The package modules `module` imports, anywhere in it (TYPE_CHECKING included);
    `from x import y` counts `x.y` where that is a module, else `x`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
            names = [name if name in known else base for name in names]
        else:
            continue
        found |= {name for name in names if name in known and name != module}
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def folder_of(module: str) -> str | None:
    """A `mutable_table` module's folder: `top`, `commit`, `rules`, `versions`, ..."""
    prefix = f"{ROOT}.mutable_table"
    if module != prefix and not module.startswith(prefix + "."):
        return None
    rest = module[len(prefix) + 1 :].split(".")
    subfolders = {p.name for p in (PACKAGE / "mutable_table").iterdir() if p.is_dir()}
    return rest[0] if rest[0] in subfolders else "top"


def folders_both_ways(graph: dict[str, set[str]]) -> int:
    arrows = {
        (folder_of(a), folder_of(b))
        for a, targets in graph.items()
        for b in targets
        if folder_of(a) and folder_of(b) and folder_of(a) != folder_of(b)
    }
    return len({frozenset(arrow) for arrow in arrows if tuple(reversed(arrow)) in arrows})


def functions(trees: list[ast.Module]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node


def parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = function.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    named = [arg for arg in named if arg.arg not in ("self", "cls")]
    return len(named) + bool(args.vararg) + bool(args.kwarg)


def mentions_file_format(node: ast.expr) -> bool:
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id == "file_format":
            return True
        if isinstance(part, ast.Attribute) and part.attr == "file_format":
            return True
        if isinstance(part, ast.Subscript) and is_key(part.slice):
            return True
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute):
            if part.func.attr == "get" and part.args and is_key(part.args[0]):
                return True
    return False


def is_key(node: ast.expr) -> bool:
    """`"file_format"` read as a key (`x["file_format"]`, `x.get("file_format")`); the
    bare string, as in `"file_format" in config`, tests a key's presence, not a format."""
    return isinstance(node, ast.Constant) and node.value == "file_format"


FORMAT_TESTS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def file_format_tests(tree: ast.Module) -> int:
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, FORMAT_TESTS) for op in node.ops):
            continue
        if mentions_file_format(node.left) or any(map(mentions_file_format, node.comparators)):
            count += 1
    return count


def class_depth(cls: type, own: set[type]) -> int:
    bases = [base for base in cls.__bases__ if base in own]
    return 1 + max((class_depth(base, own) for base in bases), default=0)


def mro_measures() -> tuple[int, int]:
    sys.path.insert(0, str(REPO))
    from dbt.adapters.jammi.impl import JammiAdapter

    own = {cls for cls in JammiAdapter.__mro__ if cls.__module__.startswith(ROOT)}
    return len(own), class_depth(JammiAdapter, own)


def measure() -> HouseMetrics:
    sources = package_sources()
    known = set(sources)
    graph = {name: imports_of(name, *sources[name], known) for name in sources}
    circles = strongly_connected(graph)
    trees = [tree for _, tree in sources.values()]
    texts = [path.read_text() for path, _ in sources.values()]
    per_file = [file_format_tests(tree) for tree in trees]
    many = [f for f in functions(trees) if parameter_count(f) >= MANY_PARAMETERS]
    mro_classes, mro_depth = mro_measures()
    return HouseMetrics(
        mro_package_classes=mro_classes,
        mro_deepest_level=mro_depth,
        type_ignore_attr_defined=sum(text.count(IGNORE_ATTR) for text in texts),
        functions_with_many_parameters=len(many),
        file_format_tests=sum(per_file),
        file_format_test_files=sum(1 for count in per_file if count),
        import_circles=len(circles),
        modules_in_circles=sum(len(circle) for circle in circles),
        mutable_table_folders_both_ways=folders_both_ways(graph),
        python_lines=sum(len(text.splitlines()) for text in texts),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    metrics = measure()
    if args.json:
        print(json.dumps(asdict(metrics), indent=2))
    else:
        width = max(map(len, asdict(metrics)))
        for name, value in asdict(metrics).items():
            print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
