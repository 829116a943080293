"""The analyzed plan of a statement over a remote connection, from ``EXPLAIN EXTENDED``.

On ``thrift``, ``http`` and ``odbc`` the adapter cannot reach Spark's plan objects, so the
tenant guard reads the "Analyzed Logical Plan" section of ``EXPLAIN EXTENDED <sql>``
(Spark analyzes the statement without running it) and rebuilds the same
:class:`PlanNode` tree that ``plan_jvm`` builds on ``method: session``. The tree lines
carry Spark's attribute ids (``tenant_id#42``), so the scope filter is still matched to
the very scan it restricts. Limit, stated in docs/tenancy.md: Spark prints a string
literal or a view's SQL text as is, so a text containing a newline followed by a fake
plan line that names the right attribute id could mislead this reader; ids are
allocated per analysis, so such a text has to predict them. ``method: session`` does
not parse text at all.
"""

from __future__ import annotations

import re
from typing import Optional

from dbt.adapters.jammi.tenancy.plan import (
    ALIAS,
    FILTER,
    OTHER,
    PROJECT,
    RELATION,
    VIEW,
    PlanNode,
    table_key,
)

ANALYZED = "== Analyzed Logical Plan =="
OPTIMIZED = "== Optimized Logical Plan =="
_CONNECTOR = re.compile(r"^(?:[ :|]  )*[+:]- ")
_LINE = re.compile(r"^((?:[ :|]  )*)([+:]- )?(.*)$")
_ATTR = re.compile(r"^\s*(?P<name>[^#\s][^#]*)#(?P<id>\d+)L?\s*$")
_FIRST_NAME = re.compile(r"(?:`[^`]*`|[^\s`])+")  # a (possibly backticked) name
_ALIASED = re.compile(r"^(?:cast\((?P<cast>.+) as [^()]+\)|(?P<plain>.+)) AS (?P<out>[^#]+#\d+L?)$")


class PlanTextError(ValueError):
    """The EXPLAIN output has no analyzed plan the guard can read."""


def analyzed_section(explain: str) -> list[str]:
    if ANALYZED not in explain:
        raise PlanTextError("EXPLAIN EXTENDED output has no analyzed logical plan")
    body = explain.split(ANALYZED, 1)[1].split(OPTIMIZED, 1)[0]
    lines = [line for line in body.strip("\n").split("\n") if line.strip()]
    # Spark prints the output schema above the root only when the plan has output
    # (``a: int, b: string``); a command (Delta's V2 CreateTableAsSelect, a V1 CTAS)
    # has none, so its root is the first line, and the second line is one of its
    # children, drawn with a tree connector (a lone line is a root: a schema always
    # has a root under it).
    if len(lines) == 1 or _CONNECTOR.match(lines[1]):
        return lines
    return lines[1:]


def root_command(explain: str) -> str:
    """The first word of the analyzed plan's root line: ``Project``, ``MergeIntoCommand``."""
    lines = analyzed_section(explain)
    return lines[0].split(" ", 1)[0].split("[", 1)[0] if lines else ""


def parse_plan(explain: str, tenant: str) -> PlanNode:
    """The analyzed plan of an ``EXPLAIN EXTENDED`` output as a PlanNode tree."""
    stack: list[tuple[int, PlanNode, list[str]]] = []
    root: Optional[PlanNode] = None
    texts: list[tuple[PlanNode, list[str]]] = []
    for line in analyzed_section(explain):
        prefix, connector, text = _LINE.match(line).groups()  # type: ignore[union-attr]
        if root is not None and not connector:
            texts[-1][1].append(line)  # a node whose text spans lines
            continue
        depth = len(prefix) + len(connector or "")
        node = PlanNode(OTHER)
        parts = [text]
        texts.append((node, parts))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        elif root is None:
            root = node
        else:
            raise PlanTextError("EXPLAIN output has more than one plan root")
        stack.append((depth, node, parts))
    if root is None:
        raise PlanTextError("EXPLAIN output has an empty analyzed plan")
    for node, parts in texts:
        _classify(node, "\n".join(parts), tenant)
    return root


def _attr(text: str) -> Optional[tuple[str, int]]:
    match = _ATTR.match(text)
    return (match["name"].strip().lower(), int(match["id"])) if match else None


def _split(items: str) -> list[str]:
    """Top-level comma split of ``a#1, cast(b#2 as int) AS b#3``."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for char in items:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if current:
        out.append("".join(current).strip())
    return out


def _attr_list(items: str) -> dict[str, int]:
    attrs = {}
    for item in _split(items):
        parsed = _attr(item)
        if parsed:
            attrs[parsed[0]] = parsed[1]
    return attrs


def _bracketed(text: str, start: int) -> str:
    """The text inside the bracket that opens at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i]
    raise PlanTextError(f"unbalanced plan line: {text[:80]}")


def _classify(node: PlanNode, text: str, tenant: str) -> None:
    head = text.split(" ", 1)[0].split("[", 1)[0]
    if head == "Relation":
        name_end = text.index("[")
        node.kind, node.table = RELATION, table_key(text[len("Relation ") : name_end])
        node.attrs = _attr_list(_bracketed(text, name_end))
    elif head == "HiveTableRelation":
        inner = _bracketed(text, text.index("["))
        node.kind, node.table = RELATION, table_key(_split(inner)[0])
        for label in ("Data Cols: ", "Partition Cols: "):
            if label in inner:
                node.attrs.update(_attr_list(_bracketed(inner, inner.index(label) + len(label))))
    elif head == "RelationV2":
        # `RelationV2[attrs] <qualified name> <table's own name>` (Spark 3.4+ prints
        # both; Iceberg's own name is the qualified one again): the first name
        attrs_end = text.index("]")
        first = _FIRST_NAME.match(text[attrs_end + 1 :].strip())
        node.kind, node.table = RELATION, table_key(first.group(0) if first else "")
        node.attrs = _attr_list(_bracketed(text, text.index("[")))
    elif head == "View":
        inner = text[text.index("(") + 1 : text.rindex(")")]
        name, _, attrs = inner.partition(", [")
        node.kind, node.table = VIEW, table_key(name)
        node.attrs = _attr_list(attrs.rstrip("]"))
    elif head == "SubqueryAlias":
        node.kind = ALIAS
    elif head == "Project":
        node.kind = PROJECT
        node.passthrough = _passthrough(_bracketed(text, text.index("[")))
    elif head == "Filter":
        node.kind = FILTER
        node.scope_attr = _scope_attr(text[len("Filter ") :], tenant)


def _passthrough(items: str) -> dict[int, set[int]]:
    mapping: dict[int, set[int]] = {}
    for item in _split(items):
        plain = _attr(item)
        if plain:
            mapping.setdefault(plain[1], set()).add(plain[1])
            continue
        match = _ALIASED.match(item)
        if not match:
            continue
        source, out = _attr(match["cast"] or match["plain"]), _attr(match["out"])
        if source and out:
            mapping.setdefault(source[1], set()).add(out[1])
    return mapping


def _scope_attr(condition: str, tenant: str) -> Optional[int]:
    match = re.fullmatch(
        r"\(\((?P<a>[^#()]+#\d+) = (?P<lit>.*)\) OR isnull\((?P<b>[^#()]+#\d+)\)\)", condition
    )
    if not match or match["a"] != match["b"] or match["lit"] != tenant:
        return None
    if re.search(r"#\d", tenant):  # the literal could then be mistaken for an attribute
        return None
    return _attr(match["a"])[1]  # type: ignore[index]
