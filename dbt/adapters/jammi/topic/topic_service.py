"""The topic wing's publish and consumers, as a service: each of the materialization's
phases is one call the face (impl.py) hands here, and each delegates to the module that
decides: publish.py (the offset claim, retention), consumers.py (what a consumer read and
records), staging.py (where a batch is staged, and the clean-up of failed publishes).
The registry's side (the registration, the view, the tail's read) is
registry_service.py, which this service holds.

The materialization's phases: ``topic_register`` (the registry row or a first
registration's claim, and the view), ``topic_prepare_staging`` and ``topic_staged_rows``
(stage, and count what was staged), ``topic_apply_retention`` (retention),
``topic_publish`` (commit and report); a consumer's post-hook ``topic_commit_consumed``.
A batch without rows is no publish: retention and the claim do nothing for it
(publish.py). A changelog registers its topic through the registry's ``register_first``
(rules_service.changelog_prepare)."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common import run_report
from dbt.adapters.jammi.common.relations import Relations
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql
from dbt.adapters.jammi.topic.consumers import (
    CONSUMERS_TABLE,
    ConsumedRange,
    ConsumerBounds,
    consumer_offsets,
    create_consumers_sql,
    record_consumed,
)
from dbt.adapters.jammi.topic.metadata import (
    TopicMetadataCache,
    read_consumed_offset,
    relation_key,
)
from dbt.adapters.jammi.topic.publish import (
    apply_retention,
    claim_offset,
    events_select_sql,
    staged_rows_sql,
)
from dbt.adapters.jammi.topic.registry_service import TopicRegistryService
from dbt.adapters.jammi.topic.row_index import is_small_batch
from dbt.adapters.jammi.topic.staging import (
    prepare_stage_table,
    remove_stale_staging_dirs,
)
from dbt.adapters.jammi.topic.topic_formats import topic_format

logger = AdapterLogger("Jammi")


# The range each consumer's compiled SQL fixed, kept until its post-hook records it.
CONSUMER_BOUNDS = ConsumerBounds()


class TopicService:
    def __init__(
        self,
        sql: SqlSession,
        registry: TopicRegistryService,
        relations: Relations,
        bounds: ConsumerBounds = CONSUMER_BOUNDS,
    ) -> None:
        self.sql, self.registry, self.relations, self.bounds = sql, registry, relations, bounds

    def events_read(
        self, topic: Any, model_name: str, consumer: str, tenant: Optional[str], where: Any
    ) -> str:
        """What ``topic_events()`` reads when the model runs: the events ``consumer`` has
        not consumed yet, their offset range fixed now (``unconsumed_events_sql``)."""
        registration = self.registry.registration(topic, model_name)
        assert registration is not None  # required_by raises instead
        backing = self.registry.backing_relation(topic, registration)
        return self.unconsumed_events_sql(topic, registration, backing, consumer, tenant, where)

    def tail(self, schema: str, topic_name: str, tenant: Optional[str]) -> dict[str, Any]:
        """The live tail's read (python -m dbt.adapters.jammi.topic.tail, docs/tail.md):
        ``{high_water, source}``, the newest committed offset of the topic registered as
        ``topic_name`` in ``schema``'s ``topics`` registry, and its backing table in the
        run's tenant scope."""
        read = self.registry.tail_read(schema, topic_name)
        backing = str(read["backing"])
        source = backing if tenant is None else scoped_relation_sql(backing, tenant)
        return {"high_water": int(read["high_water"]), "source": source}

    @property
    def metadata(self) -> TopicMetadataCache:
        return self.registry.metadata

    # --- publish: stage, retention, commit; what consumers read and record -------------

    def prepare_staging(
        self,
        backing: Any,
        topic: dict[str, Any],
        batch_sql: str,
        definition: dict[str, Any],
    ) -> dict[str, str]:
        """Where this publish stages its batch, after removing what failed publishes left
        there more than a day ago (topic/staging.py says why that is provably abandoned),
        and how the batch is numbered. parquet: a fresh directory under the backing
        table's ``_staging/`` (readers list partitions from the metastore and never ``_``
        folders), which becomes partition ``_offset=N`` when claimed; delta and iceberg: a
        stage table (staging.prepare_stage_table). ``kind`` (directory or table),
        ``target``, ``using``, and ``row_index`` (``_row_idx``'s form, topic/row_index.py):
        ``ordered`` for a model with ``row_idx: ordered`` (no statement asked); else
        ``one_task`` when Spark estimates the batch small (``explain cost``: no job runs),
        else ``parallel``, or ``window`` when the session does not reuse exchanges (read
        after the pre-hooks, which may set spark.sql.exchange.reuse)."""
        stored_as = topic_format(topic["file_format"])
        if stored_as.offsets_in_rows:
            staging = prepare_stage_table(self.sql.rows, backing, stored_as)
        else:
            removed = self._remove_stale_staging(backing, self.registry.table_location(backing))
            if removed:
                logger.debug(
                    f"topic {topic['name']}: removed {len(removed)} abandoned staged batch(es)"
                )
            staging = {
                "kind": "directory",
                "target": self.registry.staging_location(backing),
                "using": "parquet",
            }
        ordered = definition.get("row_idx") == "ordered"
        return {**staging, "row_index": "ordered" if ordered else self._row_index_form(batch_sql)}

    def _row_index_form(self, batch_sql: str) -> str:
        if is_small_batch([tuple(row) for row in self.sql.rows(f"explain cost {batch_sql}")]):
            return "one_task"
        reuse = self.sql.rows("set spark.sql.exchange.reuse")
        off = bool(reuse) and str(reuse[0][1]).lower() == "false"
        return "window" if off else "parallel"

    def staged_rows(self, staging: dict[str, str]) -> int:
        """How many rows the publish staged (0: an empty batch, which publishes nothing)."""
        return int(self.sql.rows(staged_rows_sql(staging["kind"], staging["target"]))[0][0])

    def apply_retention(
        self,
        backing: Any,
        topic: dict[str, Any],
        definition: dict[str, Any],
        staged_rows: int = 1,
    ) -> str:
        """Drop the expired offsets every registered consumer has consumed; nothing for
        an empty batch (``staged_rows`` 0: no publish follows, the topic is left as it is)."""
        if not staged_rows:
            return ""
        plan = apply_retention(
            self.sql.rows,
            str(backing),
            topic["file_format"],
            definition.get("retention_offsets"),
            definition.get("retention_ms"),
            lambda: self._consumer_positions(backing.schema, topic["topic_id"]),
        )
        if plan.drop:
            logger.info(f"topic {topic['name']}: retention dropped offsets {list(plan.drop)}")
        if plan.held_by_consumers:
            logger.info(
                f"topic {topic['name']}: retention keeps expired offsets "
                f"{list(plan.held_by_consumers)} until every registered consumer has "
                "consumed them"
            )
        return ""

    def _consumer_positions(self, schema: str, topic_id: str) -> list[int]:
        """Every registered consumer's position on a topic (none without a positions
        table, which this invocation then knows exists when it does)."""
        consumers = self._consumers_relation(schema)
        positions = consumer_offsets(self.sql.rows, str(consumers), topic_id)
        if positions is None:
            return []
        self.metadata.put(True, "exists", relation_key(consumers))
        return positions

    def publish(
        self,
        backing: Any,
        topic: dict[str, Any],
        staging: dict[str, str],
        staged_rows: int,
        previous: Any = None,
    ) -> dict[str, Any]:
        """The one step readers see: claim the next offset for the ``staged_rows`` rows
        of the staged batch (publish.claim_offset), then drop a stage table. An empty
        batch claims nothing: its stage is dropped (a parquet directory is removed where
        the session reaches the file system, else by a later publish's clean-up).
        ``offset`` (None when nothing was published), ``summary`` (what the run logs),
        and ``response``: the publish's run report, keeping what the model consumed
        (``previous``: its post-hook ran before the publish)."""
        offset = None
        if staged_rows:
            columns = ["_row_idx", "_produced_at", *(c[0] for c in topic["columns"]), "tenant_id"]
            offset = claim_offset(
                self.sql.rows, str(backing), staging["target"], topic["file_format"], columns
            )
        if staging["kind"] == "table":
            purge = " purge" if staging.get("using") == "iceberg" else ""
            self.sql.rows(f"drop table if exists {staging['target']}{purge}")
            self.metadata.forget("location", relation_key(staging["target"]))
        elif offset is None and self.sql.local_filesystem:
            storage.remove(staging["target"])
        response = run_report.publish_response(int(staged_rows), offset, previous)
        summary = (
            f"published offset {offset} to {backing}"
            if offset is not None
            else "nothing published: the batch is empty, no offset claimed"
        )
        return {"offset": offset, "summary": summary, "response": response}

    def unconsumed_events_sql(
        self,
        topic: Any,
        registration: dict[str, Any],
        backing: Any,
        consumer: str,
        tenant: Optional[str],
        where: Optional[str],
    ) -> str:
        """The query of the events ``consumer`` has not consumed yet: offsets in (its
        recorded position, the high-water mark now]. The range is fixed here, when the
        model's SQL is compiled, and kept until its post-hook records it
        (``topic_commit_consumed``)."""
        consumers = self._consumers_relation(topic.schema)
        topic_id = registration["topic_id"]
        after = read_consumed_offset(self.sql.rows, str(consumers), topic_id, consumer, tenant)
        if after is None:
            after = 0
        else:
            self.metadata.put(True, "exists", relation_key(consumers))
        stored_as = topic_format(registration["file_format"])
        upto = stored_as.high_water_mark(self.sql.rows, str(backing))
        name = f"{topic.schema}.{topic.identifier}"
        consumed = ConsumedRange(topic.schema, topic_id, after, upto, tenant, str(backing), name)
        self.bounds.remember(consumer, consumed)
        columns = [column[0] for column in registration["columns"]]
        return events_select_sql(str(backing), columns, after, upto, tenant, where)

    def commit_consumed(self, consumer: str, previous: Any) -> Any:
        """A consumer's post-hook: record what its compiled SQL read
        (consumers.record_consumed). The node's response with ``events_read`` and
        ``offsets_read`` added, or None when it read no topic's events."""
        reads = record_consumed(
            self.sql.rows, consumer, self.bounds.take(consumer), self._consumers_table
        )
        if not reads:
            return None
        return run_report.consumer_response(
            previous, {topic: (r[0], r[1], r[2]) for topic, r in reads.items()}
        )

    def _consumers_relation(self, schema: str) -> Any:
        return self.relations.table(schema, CONSUMERS_TABLE)

    def _consumers_table(self, schema: str) -> str:
        """A schema's consumer-position table, created unless this invocation knows it."""
        consumers = self._consumers_relation(schema)
        if not self.metadata.get("exists", relation_key(consumers)):
            using = self.registry.registry_format()
            self.sql.rows(create_consumers_sql(str(consumers), using))
            self.metadata.put(True, "exists", relation_key(consumers))
        return str(consumers)

    # --- staging: cleanup of failed publishes, how a batch is numbered -----------------------

    def _remove_stale_staging(self, backing: Any, location: str) -> list[str]:
        """Remove abandoned staged directories of a parquet topic; returns them."""
        if not self.sql.local_filesystem:
            logger.info(
                f"topic: skipping cleanup of {location.rstrip('/')}/_staging (no file system "
                "access over this connection method; directories older than a day that no "
                "partition points at can be removed with your storage tooling)"
            )
            return []
        return remove_stale_staging_dirs(backing.schema, backing.identifier, location)
