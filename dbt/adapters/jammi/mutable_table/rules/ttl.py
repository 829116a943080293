"""Configs ``ttl_ms`` / ``ttl_column``: rows older than ``ttl_ms`` are deleted by the run.

A row's age is now minus its ``ttl_column`` (bigint epoch milliseconds, written by the
model); with ``history: scd2`` it is now minus ``valid_to``, so only closed intervals age
and the open row never expires by TTL alone. Without ``ttl_column`` (history none) the
engine keeps the time each key was last written in ``WRITTEN_AT_COLUMN``. The planner
(``ttl.sql``) adds the deletes to the run's own change set, so they commit with it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import INTEGER_TYPES
from dbt.adapters.jammi.common.validation import require_positive_int

# Engine-maintained: when the key's row was last inserted or updated (epoch ms).
WRITTEN_AT_COLUMN = "_written_at"


def validate_ttl(
    ttl_ms: Any,
    ttl_column: Any,
    subject: str,
    types: Mapping[str, str],
    history: str,
) -> tuple[Optional[int], Optional[str]]:
    """``(ttl_ms, ttl_column)`` of a model's config, both None when TTL is off."""
    if ttl_ms is None:
        if ttl_column is not None:
            raise JammiValidationError(
                subject,
                "'ttl_column' is set but 'ttl_ms' is not",
                "set ttl_ms (e.g. 604800000 for 7 days), or remove ttl_column",
            )
        return None, None
    require_positive_int(ttl_ms, "ttl_ms", subject)
    if ttl_column is None:
        return ttl_ms, None
    if not isinstance(ttl_column, str) or not ttl_column:
        raise JammiValidationError(
            subject,
            f"'ttl_column' must be one column name, got {ttl_column!r}",
            "set ttl_column to a bigint epoch-millisecond column such as 'last_seen_ms'",
        )
    if history == "scd2":
        raise JammiValidationError(
            subject,
            "ttl_column is set with history: scd2, where a row's age is the time its "
            "interval closed (valid_to)",
            "remove ttl_column; ttl_ms alone trims closed intervals",
        )
    if ttl_column not in types:
        raise JammiValidationError(
            subject,
            f"ttl_column '{ttl_column}' is not in the model's output (columns: {', '.join(types)})",
            f"add '{ttl_column}' to the model's select list or fix ttl_column",
        )
    if types[ttl_column] not in INTEGER_TYPES:
        raise JammiValidationError(
            subject,
            f"ttl_column '{ttl_column}' has type {types[ttl_column]}",
            f"output it as bigint epoch milliseconds: "
            f"{{{{ to_epoch_millis('...') }}}} as {ttl_column}",
        )
    return ttl_ms, ttl_column


def now_ms() -> int:
    return int(time.time() * 1000)


def ttl_cutoff_ms(ttl_ms: int, now: int) -> int:
    """Rows whose age column is below this are expired."""
    return now - int(ttl_ms)


def written_at_needed(definition: Mapping[str, Any]) -> bool:
    """The engine's last-written column is kept: TTL without ttl_column, history none."""
    return (
        bool(definition.get("ttl_ms"))
        and not definition.get("ttl_column")
        and (definition.get("history", "none") == "none")
    )
