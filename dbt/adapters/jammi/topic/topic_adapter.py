"""The topic wing's face toward Jinja: every ``adapter.topic_*`` method the topic macros
call, mixed into JammiAdapter. Each delegates to the module that decides: publish.py
(offset claims, consumers, retention), metadata.py (the invocation's cache),
registration.py (the registry claim and the view), staging.py (staged batches)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common import run_report
from dbt.adapters.jammi.common.statements import StatementsMixin
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.topic.metadata import (
    TopicMetadataCache,
    describe_location,
    fingerprint_from_information,
    location_from_information,
    read_consumed_offset,
    read_registry_row,
    relation_key,
)
from dbt.adapters.jammi.topic.publish import (
    ConsumedRange,
    ConsumerBounds,
    claim_offset,
    events_select_sql,
    now_micros,
    offsets_from_partitions,
    retention_plan,
    retention_sql,
)
from dbt.adapters.jammi.topic.registration import (
    apply_view,
    claim_registration,
    create_if_absent,
    topic_storage_format,
    view_fingerprint,
)
from dbt.adapters.jammi.topic.row_index import is_small_batch
from dbt.adapters.jammi.topic.staging import publish_id, stale_stage_tables, stale_staging_dirs

logger = AdapterLogger("Jammi")


class TopicAdapterMixin(StatementsMixin):
    """The ``adapter.topic_*`` methods the topic macros call."""

    # --- publish: offsets, consumers, retention, run results ---------------------------------

    _consumer_bounds = ConsumerBounds()

    @available
    def topic_claim_offset(
        self, backing: str, staging_location: str, file_format: str, columns: Sequence[str]
    ) -> int:
        """Commit a staged publish (the lock is the partition claim / the Delta commit)."""
        return claim_offset(self._run_sql, str(backing), staging_location, file_format, columns)

    @available
    def topic_publish_id(self) -> str:
        return publish_id()

    @available
    def topic_stale_stage_tables(self, names: Iterable[str], prefix: str) -> list[str]:
        return stale_stage_tables(names, prefix, int(time.time()))

    @available
    def topic_now_micros(self) -> int:
        return now_micros()

    @available
    def topic_offsets_from_partitions(self, rows: Iterable[Sequence[Any]]) -> list[int]:
        return offsets_from_partitions(rows)

    @available
    def topic_retention_plan(
        self,
        offset_rows: Iterable[Sequence[Any]],
        retention_offsets: Optional[int],
        retention_ms: Optional[int],
        consumer_rows: Iterable[Sequence[Any]],
        incoming: int = 1,
    ) -> dict[str, Any]:
        plan = retention_plan(
            offset_rows,
            retention_offsets,
            retention_ms,
            [row[0] for row in consumer_rows],
            now_micros(),
            incoming,
        )
        return plan.to_dict()

    @available
    def topic_retention_sql(
        self, backing: str, offsets: Sequence[int], file_format: str
    ) -> Optional[str]:
        return retention_sql(str(backing), offsets, file_format)

    @available
    def topic_events_sql(
        self,
        backing: str,
        columns: Sequence[str],
        after: int,
        upto: Optional[int],
        tenant: Optional[str],
        where: Optional[str],
    ) -> str:
        return events_select_sql(str(backing), columns, after, upto, tenant, where)

    @available
    def topic_remember_consumed(
        self,
        consumer: str,
        topic_schema: str,
        topic_id: str,
        after: int,
        upto: int,
        tenant: Optional[str] = None,
        backing: str = "",
        name: str = "",
    ) -> str:
        consumed = ConsumedRange(
            topic_schema, topic_id, int(after), int(upto), tenant, str(backing), str(name)
        )
        self._consumer_bounds.remember(consumer, consumed)
        return ""

    @available
    def topic_take_consumed(self, consumer: str) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self._consumer_bounds.take(consumer)]

    # --- what a publish and a consumer report (common/run_report.py) ---------------

    @available
    def topic_publish_response(self, rows: int, offset: int, previous: Any = None) -> Any:
        return run_report.publish_response(int(rows), int(offset), previous)

    @available
    def topic_consumer_response(self, previous: Any, reads: dict[str, list[int]]) -> Any:
        """``reads``: per topic, [after, upto, events read]."""
        return run_report.consumer_response(
            previous, {topic: (r[0], r[1], r[2]) for topic, r in reads.items()}
        )

    # --- metadata: lookups answered from the invocation's cache ------------------------------

    _topic_metadata = TopicMetadataCache()

    def _listed_information(self, relation: Any) -> Optional[str]:
        """What dbt's relation cache holds about ``relation``; None unless dbt has
        listed its schema in this invocation (never lists it here)."""
        database, schema = relation.database, relation.schema
        if not self._schema_is_cached(database, schema):  # type: ignore[attr-defined]
            return None
        identifier = str(relation.identifier).lower()
        for cached in self.cache.get_relations(database, schema):  # type: ignore[attr-defined]
            if str(cached.identifier).lower() == identifier:
                return getattr(cached, "information", None)
        return None

    @available
    def topic_registry_row(
        self, registry: Any, column: str, value: str
    ) -> Optional[dict[str, Any]]:
        """The registry row with ``column`` (relation_name or name) = ``value``."""
        if column not in ("relation_name", "name"):
            raise ValueError(f"registry rows are found by relation_name or name, not {column}")
        cached = self._topic_metadata.get("registry", relation_key(registry), column, value)
        if cached is not None:
            return dict(cached)
        row = read_registry_row(self._run_sql, str(registry), column, value)
        if row is not None:
            self.topic_remember_registration(registry, row)
        return row

    @available
    def topic_remember_registration(self, registry: Any, row: dict[str, Any]) -> str:
        """Keep a registry row this invocation read or claimed."""
        kept = dict(row)
        for column in ("relation_name", "name"):
            self._topic_metadata.put(kept, "registry", relation_key(registry), column, kept[column])
        return ""

    @available
    def topic_table_location(self, relation: Any) -> str:
        cached = self._topic_metadata.get("location", relation_key(relation))
        if cached is not None:
            return str(cached)
        location = location_from_information(self._listed_information(relation))
        if location is None:
            location = describe_location(self._run_sql, str(relation))
        self._topic_metadata.put(location, "location", relation_key(relation))
        return location

    @available
    def topic_forget_table(self, relation: Any) -> str:
        """Called when this invocation drops a topic table."""
        self._topic_metadata.forget("location", relation_key(relation))
        return ""

    @available
    def topic_apply_view(
        self,
        relation: Any,
        create_sql: str,
        replace_sql: str,
        fingerprint: str,
        model_name: str,
    ) -> str:
        """``apply_view``, skipped when this invocation or dbt's listing already saw the
        view with ``fingerprint``."""
        key = ("view", relation_key(relation))
        listed = fingerprint_from_information(self._listed_information(relation))
        if fingerprint in (self._topic_metadata.get(*key), listed):
            self._topic_metadata.put(fingerprint, *key)
            return "kept"
        outcome = apply_view(
            self._run_sql,
            relation.schema,
            relation.identifier,
            create_sql,
            replace_sql,
            fingerprint,
            f"topic '{model_name}'",
        )
        self._topic_metadata.put(fingerprint, *key)
        return outcome

    @available
    def topic_consumed_offset(
        self, consumers: Any, topic_id: str, consumer: str, tenant: Optional[str]
    ) -> int:
        offset = read_consumed_offset(self._run_sql, str(consumers), topic_id, consumer, tenant)
        if offset is None:
            return 0
        self._topic_metadata.put(True, "exists", relation_key(consumers))
        return offset

    @available
    def topic_table_known(self, relation: Any) -> bool:
        """Whether this invocation has seen ``relation`` (a consumer-position table)."""
        return bool(self._topic_metadata.get("exists", relation_key(relation)))

    @available
    def topic_remember_table(self, relation: Any) -> str:
        self._topic_metadata.put(True, "exists", relation_key(relation))
        return ""

    # --- registration: the topic's registry claim and view -----------------------------------

    @available
    def topic_create_if_absent(self, create_sql: str) -> bool:
        return create_if_absent(self._run_sql, create_sql)

    @available
    def topic_claim_registration(
        self, registry: Any, name: str, staged_location: str, model_name: str
    ) -> bool:
        return claim_registration(
            self._run_sql, str(registry), name, staged_location, f"topic '{model_name}'"
        )

    @available
    def topic_storage_format(self, file_format: str) -> str:
        return topic_storage_format(file_format)

    @available
    def topic_view_fingerprint(self, view_select_sql: str) -> str:
        return view_fingerprint(view_select_sql)

    # --- staging: cleanup of failed publishes, how a batch is numbered -----------------------

    def _has_local_filesystem(self) -> bool:
        return bool(getattr(self.config.credentials, "is_session", False))  # type: ignore[attr-defined]

    @available
    def topic_remove_stale_staging(self, backing: Any, location: str) -> list[str]:
        """Remove abandoned staged directories of a parquet topic; returns them."""
        staging = f"{location.rstrip('/')}/_staging"
        if not self._has_local_filesystem():
            logger.info(
                f"topic: skipping cleanup of {staging} (no file system access over this "
                "connection method; directories older than a day that no partition points "
                "at can be removed with your storage tooling)"
            )
            return []
        now_s = int(time.time())
        children = storage.list_children(staging)
        if not stale_staging_dirs(children, (), now_s):
            return []  # nothing old enough: no need to ask for partition locations
        referenced = storage.partition_locations(backing.schema, backing.identifier)
        stale = stale_staging_dirs(children, referenced, now_s)
        for path in stale:
            storage.remove(path)
            logger.debug(f"topic: removed abandoned staged batch {path}")
        return stale

    @available
    def topic_discard_staging(self, path: str) -> bool:
        """Remove a staged directory this run has just lost a claim with."""
        if not self._has_local_filesystem():
            return False
        return storage.remove(path)

    @available
    def topic_small_batch(self, plan_rows: Iterable[Any]) -> bool:
        """Whether ``explain cost`` of the model estimates a batch small enough for the
        single-window ``_row_idx`` (``topic/row_index.py``)."""
        return is_small_batch([tuple(row) for row in plan_rows])
