"""At-least-once delivery (docs/mutable_table.md#batch-rules): rows of a batch that are
identical in every output column are one change.

A feed that re-delivers events (a Kafka consumer restarted before it committed its
offsets, a Debezium snapshot re-sent) puts the same row into a batch twice. Such rows
are collapsed into one before the batch's key rules apply, so they are never "several
rows for the same key"; rows that differ at the same key and version still are.

The collapse costs a pass over the batch, so a run pays it only where it matters: when
the key check finds duplicates (the run then goes on with the collapsed batch if they
were all identical, and the response counts the rows collapsed), and always for a table
that sums a column (``merge_functions`` ``sum``), where an identical row at any version
would be added twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.jammi.common.validation import quote_identifier
from dbt.adapters.jammi.mutable_table.compared_values import compared_text

DUPLICATE_KINDS = ("duplicate_key", "duplicate_version")


def collapsed_batch_sql(batch_source: str, columns: Sequence[Sequence[str]]) -> str:
    """The batch with each set of identical rows as one row (``batch_source`` is the
    parenthesized batch, ``columns`` its (name, type) pairs). A column Spark cannot
    compare (a map, a variant) is compared by its JSON text and keeps one of its equal
    values."""
    compared = {str(n): compared_text(quote_identifier(str(n)), str(t)) for n, t in columns}
    if not any(compared.values()):
        return f"(select distinct * from {batch_source} as delivered)"
    outputs, groups = [], []
    for name, _ in columns:
        column = quote_identifier(str(name))
        text = compared[str(name)]
        outputs.append(f"any_value({column}) as {column}" if text else column)
        groups.append(text or column)
    return (
        f"(select {', '.join(outputs)} from {batch_source} as delivered "
        f"group by {', '.join(groups)})"
    )


def collapses_always(definition: Mapping[str, Any]) -> bool:
    """Whether the run collapses identical rows before anything else: a ``sum`` merge
    function adds every batch row newer than the stored version, so a re-delivered row
    at a lower version than the key's newest would otherwise be added twice."""
    return "sum" in (definition.get("merge_functions") or {}).values()


def collapses_on_rejection(kind: str) -> bool:
    """Whether a batch check's rejection may be identical rows only (the run then checks
    the collapsed batch and goes on with it if it passes)."""
    return kind in DUPLICATE_KINDS
