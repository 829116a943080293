"""The flow pages (docs/flow/) name real macros and functions: every name in a table's
macro column is a macro (or the materialization) in the file it names, and every name in
its Python column is a function or method defined in the file it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOW = ROOT / "docs" / "flow"
MACROS = ROOT / "dbt" / "include" / "jammi" / "macros"
PACKAGE = ROOT / "dbt" / "adapters" / "jammi"
# One or more backticked names, then the file they are in: "`a`, `b` (dir/file.sql)".
NAMED = re.compile(r"((?:`[A-Za-z_][A-Za-z0-9_.]*`(?:, )?)+)(?: \(([^)`]+\.(?:sql|py))\))?")
GENERATED = "do not edit by hand"


def hand_written_pages() -> list[Path]:
    return sorted(p for p in FLOW.glob("*.md") if GENERATED not in p.read_text())


def resolve(tree: Path, relative: str) -> Path:
    direct = tree / relative
    if direct.is_file():
        return direct
    found = [p for p in tree.rglob(Path(relative).name) if p.as_posix().endswith(relative)]
    assert len(found) == 1, f"{relative}: {len(found)} files under {tree}"
    return found[0]


def named_in(cell: str) -> list[tuple[str, str | None]]:
    """``(name, file)`` for each backticked name of a cell; file names themselves skipped."""
    pairs = []
    for match in NAMED.finditer(cell):
        for name in re.findall(r"`([^`]+)`", match.group(1)):
            if not name.endswith((".py", ".sql")):
                pairs.append((name, match.group(2)))
    return pairs


def table_cells(page: Path, column: str) -> list[str]:
    """The cells of every table column whose header starts with ``column``."""
    cells: list[str] = []
    index = None
    for line in page.read_text().splitlines():
        if not line.startswith("|"):
            index = None
            continue
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if index is None:
            starts = [i for i, header in enumerate(row) if header.startswith(column)]
            index = starts[0] if starts else -1
        elif index >= 0 and not set(row[0]) <= {"-"}:
            cells.append(row[index] if index < len(row) else "")
    return cells


def macro_defined(name: str, text: str) -> bool:
    materialization = re.fullmatch(r"materialization_(\w+)_jammi", name)
    if materialization:
        return f"materialization {materialization.group(1)}, adapter='jammi'" in text
    return re.search(rf"{{%-? macro {re.escape(name)}\(", text) is not None


def all_macro_text() -> str:
    return "\n".join(p.read_text() for p in MACROS.rglob("*.sql"))


def test_the_flow_pages_exist() -> None:
    names = {p.name for p in hand_written_pages()}
    assert {"mutable_table.md", "topic.md", "dbt_spark.md"} <= names


@pytest.mark.parametrize("page", hand_written_pages(), ids=lambda p: p.name)
def test_each_macro_named_is_defined_where_the_page_says(page: Path) -> None:
    named = [pair for cell in table_cells(page, "macro") for pair in named_in(cell)]
    assert named, f"{page.name}: no macro column"
    everywhere = all_macro_text()
    missing = [
        (name, where)
        for name, where in named
        if not macro_defined(name, resolve(MACROS, where).read_text() if where else everywhere)
    ]
    assert missing == []


@pytest.mark.parametrize("page", hand_written_pages(), ids=lambda p: p.name)
def test_each_function_named_is_defined_where_the_page_says(page: Path) -> None:
    named = [pair for cell in table_cells(page, "Python") for pair in named_in(cell)]
    assert named, f"{page.name}: no Python column"
    unplaced = [name for name, where in named if where is None]
    assert unplaced == [], f"{page.name}: functions without their file"
    missing = [
        (name, where)
        for name, where in named
        if where and not function_defined(name, resolve(PACKAGE, where).read_text())
    ]
    assert missing == []


def function_defined(name: str, text: str) -> bool:
    """``def name(`` in ``text``, or a face method that hands the call to a service
    (``name = hands_to(...)``, common/face.py)."""
    short = re.escape(name.split(".")[-1])
    return re.search(rf"\bdef {short}\(|^\s+{short} = hands_to\(", text, re.M) is not None


def test_a_wrong_name_is_caught() -> None:
    assert named_in("`commit_merge` (commit/merge_commit.py), `x`") == [
        ("commit_merge", "commit/merge_commit.py"),
        ("x", None),
    ]
    face = resolve(PACKAGE, "impl.py").read_text()
    assert function_defined("mutable_commit", face)
    assert not function_defined("mutable_commit", "    mutable_commit_x = hands_to(")
    text = resolve(MACROS, "mutable_table/mutable_table.sql").read_text()
    assert macro_defined("materialization_mutable_table_jammi", text)
    assert not macro_defined("no_such_macro", text)
