"""The topic registry's service: the registry row a topic's relation stands for, a first
registration's claim and the view named after the model (registration.py decides;
metadata.py caches what the invocation has read), and the live tail's read. The face's
``adapter.topic_registration`` and ``topic_register`` (impl.py) hand their calls here;
the publish's service (topic_service.py) and a changelog's registration use it too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError

from dbt.adapters.jammi.common.relations import Relations
from dbt.adapters.jammi.common.sql_session import DEFAULT_CATALOG, SqlSession
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.topic.metadata import (
    TopicMetadataCache,
    describe_location,
    fingerprint_from_information,
    location_from_information,
    read_registry_row,
    relation_key,
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
from dbt.adapters.jammi.topic.staging import publish_id
from dbt.adapters.jammi.topic.topic_formats import topic_format

logger = AdapterLogger("Jammi")

PARTITION_PRUNING_FALLBACK = "set spark.sql.hive.metastorePartitionPruningFallbackOnException=true"


# What this process has read of topics' registries and tables, kept for the invocation
# (metadata.py says when an entry may be trusted).
TOPIC_METADATA = TopicMetadataCache()

# a model's file_format config, resolved on this session (``auto`` included)
ResolveFormat = Callable[[Any, str], str]


class TopicRegistryService:
    """``resolve_file_format``: the adapter's (the session's formats decide ``auto``)."""

    def __init__(
        self,
        sql: SqlSession,
        relations: Relations,
        resolve_file_format: ResolveFormat,
        metadata: TopicMetadataCache = TOPIC_METADATA,
    ) -> None:
        self.sql, self.relations = sql, relations
        self.resolve_file_format = resolve_file_format
        self.metadata = metadata

    def registry_row(self, registry: Any, column: str, value: str) -> Optional[dict[str, Any]]:
        """The registry row with ``column`` (relation_name or name) = ``value``."""
        if column not in ("relation_name", "name"):
            raise ValueError(f"registry rows are found by relation_name or name, not {column}")
        cached = self.metadata.get("registry", relation_key(registry), column, value)
        if cached is not None:
            return dict(cached)
        row = read_registry_row(self.sql.rows, str(registry), column, value)
        if row is not None:
            self._remember(registry, row)
        return row

    def _remember(self, registry: Any, row: dict[str, Any]) -> None:
        """Keep a registry row this invocation read or claimed."""
        kept = dict(row)
        for column in ("relation_name", "name"):
            self.metadata.put(kept, "registry", relation_key(registry), column, kept[column])

    def table_location(self, relation: Any) -> str:
        cached = self.metadata.get("location", relation_key(relation))
        if cached is not None:
            return str(cached)
        location = location_from_information(self.relations.listed_information(relation))
        if location is None:
            location = describe_location(self.sql.rows, str(relation))
        self.metadata.put(location, "location", relation_key(relation))
        return location

    def staging_location(self, relation: Any) -> str:
        """A fresh directory under ``relation``'s ``_staging/`` (a staged batch or
        registry row)."""
        return f"{self.table_location(relation)}/_staging/{publish_id()}"

    # --- registration: the registry claim and the view ---------------------------------------

    def registration(
        self, relation: Any, required_by: Optional[str] = None
    ) -> Optional[dict[str, Any]]:
        """The registry row of the topic ``relation`` (a model's view, or a changelog's
        table) stands for, or None: asked directly (a missing registry reads as no row)
        and kept for the invocation once found. ``required_by``: the model reading the
        topic (its session set up for the read, read_session), which fails with
        the fix when there is no row."""
        if required_by is not None:
            self.read_session()
        row = self.registry_row(
            self.registry_relation(relation), "relation_name", relation.identifier
        )
        if row is None and required_by is not None:
            raise CompilationError(
                f"model '{required_by}': {relation} is not a topic (no row in "
                f"{relation.schema}.topics)\n  Fix: pass ref() of a model with "
                "materialized='topic', and build it first"
            )
        return row

    def register(
        self,
        relation: Any,
        definition: dict[str, Any],
        model_name: str,
        requested_format: Any = None,
    ) -> dict[str, Any]:
        """Find the model's topic or register it (registration.py: the claim), check that
        its name and columns are the registered ones, and make sure the view named after
        the model is right. ``requested_format``: the model's file_format config."""
        self.read_session()
        topic = self.registration(relation)
        if topic is None:
            topic = self.register_first(relation, definition, model_name, requested_format)
        check_unchanged(topic, definition, f"topic '{model_name}'")
        self._apply_view(relation, topic, model_name)
        return topic

    def register_first(
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
        registry = self.registry_relation(relation)
        subject, name = f"topic '{model_name}'", definition["name"]
        registry_format = self.registry_format()
        check_name_free(
            self.sql.rows, str(registry), name, subject, relation.schema, registry_format
        )
        if stored_format is None:
            requested = self.resolve_file_format(requested_format, model_name)
            stored_format = topic_storage_format(requested)
        # before the backing table: only the (empty) registry may exist yet
        check_catalog_service_format(
            stored_format, registry_format, subject, self.sql.default_catalog()
        )
        candidate = {
            **{key: definition[key] for key in ("topic_id", "name", "backing_table", "columns")},
            "file_format": stored_format,
            "retention_offsets": definition.get("retention_offsets"),
            "retention_ms": definition.get("retention_ms"),
            "relation_name": relation.identifier,
        }
        backing = self.backing_relation(relation, candidate)
        staged = self.staging_location(registry) if registry_format == "parquet" else None
        won = register_first(self.sql.rows, str(registry), str(backing), candidate, staged, subject)
        if won:
            self._remember(registry, candidate)
            return candidate
        self.metadata.forget("location", relation_key(backing))
        if staged is not None and self.sql.local_filesystem:
            storage.remove(staged)
        winner = self.registry_row(registry, "name", name)
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
        backing = str(self.backing_relation(relation, topic))
        fingerprint = view_fingerprint(view_select_sql(backing, topic))
        key = ("view", relation_key(relation))
        listed = fingerprint_from_information(self.relations.listed_information(relation))
        if fingerprint in (self.metadata.get(*key), listed):
            self.metadata.put(fingerprint, *key)
            return
        old = self.relations.get_relation(relation.database, relation.schema, relation.identifier)
        if old is not None and old.type != "view":
            self.relations.drop_relation(old)
        outcome = apply_view(
            self.sql.rows,
            relation.schema,
            relation.identifier,
            create_view_sql(str(relation), backing, topic, fingerprint, replace=False),
            create_view_sql(str(relation), backing, topic, fingerprint, replace=True),
            fingerprint,
            f"topic '{model_name}'",
        )
        self.metadata.put(fingerprint, *key)
        if outcome != "kept":
            logger.debug(f"topic {topic['name']}: view {relation} {outcome}")

    def backing_relation(self, relation: Any, topic: Mapping[str, Any]) -> Any:
        """The backing table of ``topic``, in ``relation``'s schema."""
        return self.relations.table(relation.schema, topic["backing_table"], relation.database)

    def registry_format(self) -> str:
        """parquet (claims as metastore partitions) on the session catalog; iceberg
        (claims by validated MERGEs) when the default catalog is a catalog service,
        which keeps no partitions of its own."""
        return "parquet" if self.sql.default_catalog() == DEFAULT_CATALOG else "iceberg"

    def tail_read(self, schema: str, topic_name: str) -> dict[str, Any]:
        """The live tail's read (tail.py, docs/tail.md): the topic registered as
        ``topic_name`` in ``schema``'s registry, as ``{high_water, backing}``: its
        newest committed offset (the offsets at or below it are complete; 0: none) and
        its backing table."""
        self.read_session()
        registry = self.relations.table(schema, REGISTRY_TABLE)
        found = self.registry_row(registry, "name", topic_name)
        if found is None:
            raise CompilationError(
                f"tail: no topic '{topic_name}' in {registry}\n  Fix: name a published topic "
                "(topic_name, e.g. cdc.orders) and pass --schema where its `topics` "
                "registry lives"
            )
        backing = self.backing_relation(registry, found)
        upto = topic_format(found["file_format"]).high_water_mark(self.sql.rows, str(backing))
        return {"high_water": upto, "backing": backing}

    def read_session(self) -> None:
        """Set the session up for reads of topics: the Hive metastore's partition-filter
        parser rejects names that start with '_', so a pushed-down ``_offset > N``
        fails; with the fallback on, Spark lists the partitions and prunes them itself
        (same result)."""
        self.sql.trusted(PARTITION_PRUNING_FALLBACK)

    def registry_relation(self, relation: Any) -> Any:
        return self.relations.table(relation.schema, REGISTRY_TABLE, relation.database)
