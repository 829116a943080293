"""The topic wing's face toward Jinja: every ``adapter.topic_*`` method the topic macros
call, mixed into JammiAdapter. Each delegates to the module that decides: publish.py
(the offset claim, retention), consumers.py (what a consumer read and records),
metadata.py (the invocation's cache), registration.py (the registry claim and the
view), staging.py (where a batch is staged, and the clean-up of failed publishes).

The materialization's phases each make one call: ``topic_register`` (the registry row
or a first registration's claim, and the view), ``topic_prepare_staging`` (stage),
``topic_apply_retention`` (retention), ``topic_publish`` (commit and report); a
consumer's post-hook ``topic_commit_consumed``. A changelog registers its topic through
``_register_first`` (rules_adapter.changelog_prepare)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError

from dbt.adapters.jammi.common import run_report
from dbt.adapters.jammi.common.statements import DEFAULT_CATALOG, StatementsMixin
from dbt.adapters.jammi.engine import storage
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
    describe_location,
    fingerprint_from_information,
    location_from_information,
    read_consumed_offset,
    read_registry_row,
    relation_key,
)
from dbt.adapters.jammi.topic.publish import (
    TABLE_FORMATS,
    apply_retention,
    claim_offset,
    events_select_sql,
    high_water_mark,
)
from dbt.adapters.jammi.topic.registration import (
    apply_view,
    check_catalog_service_format,
    check_name_free,
    check_unchanged,
    name_taken,
    register_first,
    topic_storage_format,
    view_fingerprint,
)
from dbt.adapters.jammi.topic.registry_sql import (
    REGISTRY_TABLE,
    create_view_sql,
    view_select_sql,
)
from dbt.adapters.jammi.topic.row_index import is_small_batch
from dbt.adapters.jammi.topic.staging import (
    prepare_stage_table,
    publish_id,
    remove_stale_staging_dirs,
)

logger = AdapterLogger("Jammi")

PARTITION_PRUNING_FALLBACK = "set spark.sql.hive.metastorePartitionPruningFallbackOnException=true"


class TopicAdapterMixin(StatementsMixin):
    """The ``adapter.topic_*`` methods the topic macros call."""

    # --- publish: stage, retention, commit; what consumers read and record -------------

    _consumer_bounds = ConsumerBounds()

    @available
    def topic_prepare_staging(
        self, backing: Any, topic: dict[str, Any], batch_sql: str
    ) -> dict[str, str]:
        """Where this publish stages its batch, after removing what failed publishes left
        there more than a day ago (topic/staging.py says why that is provably abandoned),
        and how the batch is numbered. parquet: a fresh directory under the backing
        table's ``_staging/`` (readers list partitions from the metastore and never ``_``
        folders), which becomes partition ``_offset=N`` when claimed; delta and iceberg: a
        stage table (staging.prepare_stage_table). ``kind`` (directory or table),
        ``target``, ``using``, and ``row_index`` (``_row_idx``'s form, topic/row_index.py):
        ``one_task`` when Spark estimates the batch small (``explain cost``: no job runs),
        else ``parallel``, or ``window`` when the session does not reuse exchanges (read
        after the pre-hooks, which may set spark.sql.exchange.reuse)."""
        if topic["file_format"] in TABLE_FORMATS:
            staging = prepare_stage_table(self._run_sql, backing, topic["file_format"])
        else:
            removed = self._remove_stale_staging(backing, self.topic_table_location(backing))
            if removed:
                logger.debug(
                    f"topic {topic['name']}: removed {len(removed)} abandoned staged batch(es)"
                )
            staging = {
                "kind": "directory",
                "target": self.topic_staging_location(backing),
                "using": "parquet",
            }
        return {**staging, "row_index": self._row_index_form(batch_sql)}

    def _row_index_form(self, batch_sql: str) -> str:
        if is_small_batch([tuple(row) for row in self._run_sql(f"explain cost {batch_sql}")]):
            return "one_task"
        reuse = self._run_sql("set spark.sql.exchange.reuse")
        off = bool(reuse) and str(reuse[0][1]).lower() == "false"
        return "window" if off else "parallel"

    def topic_staging_location(self, relation: Any) -> str:
        """A fresh directory under ``relation``'s ``_staging/`` (a staged batch or
        registry row)."""
        return f"{self.topic_table_location(relation)}/_staging/{publish_id()}"

    @available
    def topic_apply_retention(
        self, backing: Any, topic: dict[str, Any], definition: dict[str, Any]
    ) -> str:
        """Drop the expired offsets every registered consumer has consumed."""
        plan = apply_retention(
            self._run_sql,
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
        positions = consumer_offsets(self._run_sql, str(consumers), topic_id)
        if positions is None:
            return []
        self._topic_metadata.put(True, "exists", relation_key(consumers))
        return positions

    @available
    def topic_publish(
        self, backing: Any, topic: dict[str, Any], staging: dict[str, str], previous: Any = None
    ) -> dict[str, Any]:
        """The one step readers see: claim the next offset for the staged batch
        (publish.claim_offset), then drop a stage table. ``offset``, and
        ``response``: the publish's run report, keeping what the model consumed
        (``previous``: its post-hook ran before the publish)."""
        columns = ["_row_idx", "_produced_at", *(c[0] for c in topic["columns"]), "tenant_id"]
        offset = claim_offset(
            self._run_sql, str(backing), staging["target"], topic["file_format"], columns
        )
        if staging["kind"] == "table":
            purge = " purge" if staging.get("using") == "iceberg" else ""
            self._run_sql(f"drop table if exists {staging['target']}{purge}")
            self._topic_metadata.forget("location", relation_key(staging["target"]))
        rows = self._run_sql(f"select count(*) from {backing} where _offset = {int(offset)}")
        response = run_report.publish_response(int(rows[0][0]), offset, previous)
        return {"offset": offset, "response": response}

    def topic_unconsumed_events_sql(
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
        after = read_consumed_offset(self._run_sql, str(consumers), topic_id, consumer, tenant)
        if after is None:
            after = 0
        else:
            self._topic_metadata.put(True, "exists", relation_key(consumers))
        upto = high_water_mark(self._run_sql, str(backing), registration["file_format"])
        name = f"{topic.schema}.{topic.identifier}"
        consumed = ConsumedRange(topic.schema, topic_id, after, upto, tenant, str(backing), name)
        self._consumer_bounds.remember(consumer, consumed)
        columns = [column[0] for column in registration["columns"]]
        return events_select_sql(str(backing), columns, after, upto, tenant, where)

    @available
    def topic_commit_consumed(self, consumer: str, previous: Any) -> Any:
        """A consumer's post-hook: record what its compiled SQL read
        (consumers.record_consumed). The node's response with ``events_read`` and
        ``offsets_read`` added, or None when it read no topic's events."""
        reads = record_consumed(
            self._run_sql, consumer, self._consumer_bounds.take(consumer), self._consumers_table
        )
        if not reads:
            return None
        return run_report.consumer_response(
            previous, {topic: (r[0], r[1], r[2]) for topic, r in reads.items()}
        )

    def _consumers_relation(self, schema: str) -> Any:
        return self.Relation.create(schema=schema, identifier=CONSUMERS_TABLE, type="table")  # type: ignore[attr-defined]

    def _consumers_table(self, schema: str) -> str:
        """A schema's consumer-position table, created unless this invocation knows it."""
        consumers = self._consumers_relation(schema)
        if not self._topic_metadata.get("exists", relation_key(consumers)):
            using = self._topic_registry_format()
            self._run_sql(create_consumers_sql(str(consumers), using))
            self._topic_metadata.put(True, "exists", relation_key(consumers))
        return str(consumers)

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
            self._remember_registration(registry, row)
        return row

    def _remember_registration(self, registry: Any, row: dict[str, Any]) -> None:
        """Keep a registry row this invocation read or claimed."""
        kept = dict(row)
        for column in ("relation_name", "name"):
            self._topic_metadata.put(kept, "registry", relation_key(registry), column, kept[column])

    def topic_table_location(self, relation: Any) -> str:
        cached = self._topic_metadata.get("location", relation_key(relation))
        if cached is not None:
            return str(cached)
        location = location_from_information(self._listed_information(relation))
        if location is None:
            location = describe_location(self._run_sql, str(relation))
        self._topic_metadata.put(location, "location", relation_key(relation))
        return location

    # --- registration: the registry claim and the view ---------------------------------------

    @available
    def topic_registration(
        self, relation: Any, required_by: Optional[str] = None
    ) -> Optional[dict[str, Any]]:
        """The registry row of the topic ``relation`` (a model's view, or a changelog's
        table) stands for, or None: asked directly (a missing registry reads as no row)
        and kept for the invocation once found. ``required_by``: the model reading the
        topic (its session set up for the read, topic_read_session), which fails with
        the fix when there is no row."""
        if required_by is not None:
            self.topic_read_session()
        row = self.topic_registry_row(
            self._registry_relation(relation), "relation_name", relation.identifier
        )
        if row is None and required_by is not None:
            raise CompilationError(
                f"model '{required_by}': {relation} is not a topic (no row in "
                f"{relation.schema}.topics)\n  Fix: pass ref() of a model with "
                "materialized='topic', and build it first"
            )
        return row

    @available
    def topic_register(
        self,
        relation: Any,
        definition: dict[str, Any],
        model_name: str,
        requested_format: Any = None,
    ) -> dict[str, Any]:
        """Find the model's topic or register it (registration.py: the claim), check that
        its name and columns are the registered ones, and make sure the view named after
        the model is right. ``requested_format``: the model's file_format config."""
        self.topic_read_session()
        topic = self.topic_registration(relation)
        if topic is None:
            topic = self._register_first(relation, definition, model_name, requested_format)
        check_unchanged(topic, definition, f"topic '{model_name}'")
        self._apply_view(relation, topic, model_name)
        return topic

    def _register_first(
        self,
        relation: Any,
        definition: dict[str, Any],
        model_name: str,
        requested_format: Any = None,
        stored_format: Optional[str] = None,
    ) -> dict[str, Any]:
        """A first registration, race-free: one backing table per topic name whatever the
        timing (registration.py). Creates the registry if absent, refuses a name another
        model holds, creates this run's own backing table, stages its registry row and
        claims the name. The loser of a concurrent claim drops its own table and returns
        the winner's row, unless the winner is another model. ``stored_format``: a
        changelog topic's, else the model's resolved format decides it."""
        registry = self._registry_relation(relation)
        subject, name = f"topic '{model_name}'", definition["name"]
        registry_format = self._topic_registry_format()
        check_name_free(
            self._run_sql, str(registry), name, subject, relation.schema, registry_format
        )
        if stored_format is None:
            requested = self.resolve_file_format(requested_format, model_name)  # type: ignore[attr-defined]
            stored_format = topic_storage_format(requested)
        # before the backing table: only the (empty) registry may exist yet
        check_catalog_service_format(
            stored_format, registry_format, subject, self._default_catalog()
        )
        candidate = {
            **{key: definition[key] for key in ("topic_id", "name", "backing_table", "columns")},
            "file_format": stored_format,
            "retention_offsets": definition.get("retention_offsets"),
            "retention_ms": definition.get("retention_ms"),
            "relation_name": relation.identifier,
        }
        backing = self.topic_backing_relation(relation, candidate)
        staged = self.topic_staging_location(registry) if registry_format == "parquet" else None
        won = register_first(self._run_sql, str(registry), str(backing), candidate, staged, subject)
        if won:
            self._remember_registration(registry, candidate)
            return candidate
        self._topic_metadata.forget("location", relation_key(backing))
        if staged is not None and self._has_local_filesystem():
            storage.remove(staged)
        winner = self.topic_registry_row(registry, "name", name)
        if winner is None:  # the claim was refused because a row of this name exists
            raise ValueError(f"topic {name}: lost its registration claim, but no row holds it")
        if winner["relation_name"] != relation.identifier:
            raise name_taken(subject, name, winner["relation_name"], relation.schema)
        backing_table = winner["backing_table"]
        logger.info(f"topic {name}: registered concurrently; publishing to {backing_table}")
        return winner

    def _apply_view(self, relation: Any, topic: dict[str, Any], model_name: str) -> None:
        """Create the view named after the model only when it is missing or wrong
        (registration.apply_view), skipped when this invocation or dbt's listing already
        saw it with its fingerprint: concurrent publishes of a registered topic leave it
        alone. A table of the view's name is dropped first."""
        backing = str(self.topic_backing_relation(relation, topic))
        fingerprint = view_fingerprint(view_select_sql(backing, topic))
        key = ("view", relation_key(relation))
        listed = fingerprint_from_information(self._listed_information(relation))
        if fingerprint in (self._topic_metadata.get(*key), listed):
            self._topic_metadata.put(fingerprint, *key)
            return
        old = self.get_relation(relation.database, relation.schema, relation.identifier)  # type: ignore[attr-defined]
        if old is not None and old.type != "view":
            self.drop_relation(old)  # type: ignore[attr-defined]
        outcome = apply_view(
            self._run_sql,
            relation.schema,
            relation.identifier,
            create_view_sql(str(relation), backing, topic, fingerprint, replace=False),
            create_view_sql(str(relation), backing, topic, fingerprint, replace=True),
            fingerprint,
            f"topic '{model_name}'",
        )
        self._topic_metadata.put(fingerprint, *key)
        if outcome != "kept":
            logger.debug(f"topic {topic['name']}: view {relation} {outcome}")

    def topic_backing_relation(self, relation: Any, topic: Mapping[str, Any]) -> Any:
        """The backing table of ``topic``, in ``relation``'s schema."""
        return self.Relation.create(  # type: ignore[attr-defined]
            database=relation.database,
            schema=relation.schema,
            identifier=topic["backing_table"],
            type="table",
        )

    def _topic_registry_format(self) -> str:
        """parquet (claims as metastore partitions) on the session catalog; iceberg
        (claims by validated MERGEs) when the default catalog is a catalog service,
        which keeps no partitions of its own."""
        return "parquet" if self._default_catalog() == DEFAULT_CATALOG else "iceberg"

    def topic_tail_read(self, schema: str, topic_name: str) -> dict[str, Any]:
        """The live tail's read (tail.py, docs/tail.md): the topic registered as
        ``topic_name`` in ``schema``'s registry, as ``{high_water, backing}``: its
        newest committed offset (the offsets at or below it are complete; 0: none) and
        its backing table."""
        self.topic_read_session()
        registry = self.Relation.create(schema=schema, identifier=REGISTRY_TABLE, type="table")  # type: ignore[attr-defined]
        found = self.topic_registry_row(registry, "name", topic_name)
        if found is None:
            raise CompilationError(
                f"tail: no topic '{topic_name}' in {registry}\n  Fix: name a published topic "
                "(topic_name, e.g. cdc.orders) and pass --schema where its `topics` "
                "registry lives"
            )
        backing = self.topic_backing_relation(registry, found)
        upto = high_water_mark(self._run_sql, str(backing), found["file_format"])
        return {"high_water": upto, "backing": backing}

    def topic_read_session(self) -> None:
        """Set the session up for reads of topics: the Hive metastore's partition-filter
        parser rejects names that start with '_', so a pushed-down ``_offset > N``
        fails; with the fallback on, Spark lists the partitions and prunes them itself
        (same result)."""
        self._execute_trusted(PARTITION_PRUNING_FALLBACK)

    def _registry_relation(self, relation: Any) -> Any:
        return self.Relation.create(  # type: ignore[attr-defined]
            database=relation.database,
            schema=relation.schema,
            identifier=REGISTRY_TABLE,
            type="table",
        )

    # --- staging: cleanup of failed publishes, how a batch is numbered -----------------------

    def _remove_stale_staging(self, backing: Any, location: str) -> list[str]:
        """Remove abandoned staged directories of a parquet topic; returns them."""
        if not self._has_local_filesystem():
            logger.info(
                f"topic: skipping cleanup of {location.rstrip('/')}/_staging (no file system "
                "access over this connection method; directories older than a day that no "
                "partition points at can be removed with your storage tooling)"
            )
            return []
        return remove_stale_staging_dirs(backing.schema, backing.identifier, location)
