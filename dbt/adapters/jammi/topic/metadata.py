"""What topic publishes and consumers read about the metastore, kept for one dbt invocation.

A scheduled project publishes and consumes many topics in one ``dbt run``; each of them
used to ask the metastore the same questions again. Kept here, for the invocation:

- **registry rows** (``topics``), found by relation name or by topic name. A row never
  changes once claimed (registration attaches a one-row partition, written once), so a
  row read earlier in the invocation is still the row. A lookup that finds nothing is
  *not* kept: another model of this run, or another run, may register the topic next.
- **table locations** of topic tables (backing tables, the registry). A topic table's
  location is fixed when it is created (backing tables carry a fresh uuid in their
  name). Read from dbt's relation cache when dbt listed the schema at the start of the
  run (dbt-spark's ``show table extended`` carries every table's ``Location``), else
  with ``describe table extended``.
- **view fingerprints** this invocation has read or written, and the fingerprint in
  dbt's relation cache: a view that already selects the right thing costs no statement.
- **which consumer-position tables exist** (they are never dropped by dbt-jammi).

Invalidation: this invocation's own writes update the cache where they happen -- a
registration claim puts the claimed row, a view create or replace puts its fingerprint,
a dropped table forgets its location. The cache is keyed by dbt's invocation id, so an
adapter reused across invocations (``dbtRunner`` in one process) starts empty.

It lives in the dbt process (the Spark driver's client), never in Spark: nothing here
assumes that driver and executors share a JVM, and over a Thrift server in front of a
cluster everything it learns arrives as the rows of ordinary SQL statements.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Callable, Optional

from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.topic.registration import (
    VIEW_FINGERPRINT,
    is_not_found,
)

RunSql = Callable[[str], Any]

REGISTRY_COLUMNS = ("topic_id", "name", "backing_table", "schema_json", "file_format")
_LOCATION = re.compile(r"^Location: (.+)$", re.M)
_FINGERPRINT = re.compile(re.escape(VIEW_FINGERPRINT) + r"=([0-9a-f]+)")


def relation_key(relation: Any) -> str:
    return str(relation).lower()


class TopicMetadataCache:
    """One invocation's registry rows, locations, view fingerprints and known tables."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocation = ""
        self._entries: dict[tuple[str, ...], Any] = {}

    def _scope(self) -> dict[tuple[str, ...], Any]:
        invocation = get_invocation_id()
        if invocation != self._invocation:
            self._invocation, self._entries = invocation, {}
        return self._entries

    def get(self, *key: str) -> Any:
        with self._lock:
            return self._scope().get(key)

    def put(self, value: Any, *key: str) -> None:
        with self._lock:
            self._scope()[key] = value

    def forget(self, *key: str) -> None:
        with self._lock:
            self._scope().pop(key, None)


# --- statements --------------------------------------------------------------------


def registry_row_sql(registry: str, column: str, value: str) -> str:
    return (
        f"select {', '.join(REGISTRY_COLUMNS)}, relation_name from {registry} "
        f"where {column} = {sql_string_literal(value)} order by created_at limit 1"
    )


def read_registry_row(
    run_sql: RunSql, registry: str, column: str, value: str
) -> Optional[dict[str, Any]]:
    """The oldest registry row with ``column = value``; None if there is none or the
    registry does not exist yet (asked directly: no separate existence check)."""
    try:
        rows = run_sql(registry_row_sql(registry, column, value))
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if is_not_found(str(exc)):
            return None
        raise
    if not rows:
        return None
    row = rows[0]
    return {
        "topic_id": row[0],
        "name": row[1],
        "backing_table": row[2],
        "columns": json.loads(row[3]),
        "file_format": row[4],
        "relation_name": row[5],
    }


def location_from_information(information: Optional[str]) -> Optional[str]:
    """``Location`` of a relation as dbt-spark's listing describes it."""
    match = _LOCATION.search(information or "")
    return match.group(1).strip() if match else None


def fingerprint_from_information(information: Optional[str]) -> Optional[str]:
    """The view fingerprint among a listed relation's ``Table Properties``."""
    match = _FINGERPRINT.search(information or "")
    return match.group(1) if match else None


def describe_location(run_sql: RunSql, relation: str) -> str:
    for row in run_sql(f"describe table extended {relation}"):
        if len(row) > 1 and row[0] == "Location":
            return str(row[1])
    raise DbtRuntimeError(f"cannot find the location of {relation}")


def read_consumed_offset(
    run_sql: RunSql, consumers: str, topic_id: str, consumer: str, tenant: Optional[str]
) -> Optional[int]:
    """A consumer's last consumed offset (0: none); None if ``consumers`` does not exist."""
    tenant_sql = sql_string_literal(tenant) if tenant is not None else "null"
    try:
        rows = run_sql(
            f"select coalesce(max(last_offset), 0) from {consumers} "
            f"where topic_id = {sql_string_literal(topic_id)} "
            f"and consumer = {sql_string_literal(consumer)} and tenant_id <=> {tenant_sql}"
        )
    except Exception as exc:  # noqa: BLE001
        if is_not_found(str(exc)):
            return None
        raise
    return int(rows[0][0])
