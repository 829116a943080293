"""JammiAdapter: dbt-spark's adapter plus the definition layer exposed to Jinja."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import make_dataclass
from typing import Any, Optional

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import (
    GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME,
    LIST_RELATIONS_MACRO_NAME,
    TABLE_OR_VIEW_NOT_FOUND_MESSAGES,
    SparkAdapter,
    SparkConfig,
)
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.config_keys import adapter_config_fields
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.statements import DEFAULT_CATALOG
from dbt.adapters.jammi.common.validation import (
    quote_identifier,
    sql_string_literal,
    validate_registry_schema,
    validate_tenant_value,
)
from dbt.adapters.jammi.connections import JammiConnectionManager
from dbt.adapters.jammi.engine.engine_adapter import DeltaReplaceAdapterMixin
from dbt.adapters.jammi.engine.jar_releases import iceberg_packages_hint, packages_hint
from dbt.adapters.jammi.engine.listing import list_relations_retrying_vanished, marked_iceberg
from dbt.adapters.jammi.engine.session import (
    SessionCapabilities,
    cached_capabilities,
    remember_capabilities,
)
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition, validate_file_format
from dbt.adapters.jammi.mutable_table.rules.rules_adapter import MutableRulesAdapterMixin
from dbt.adapters.jammi.mutable_table.run_adapter import MutableRunAdapterMixin
from dbt.adapters.jammi.mutable_table.table_properties import describe_properties
from dbt.adapters.jammi.mutable_table.tblproperties_config import validate_tblproperties
from dbt.adapters.jammi.mutable_table.versions.iceberg_expiry import validate_expire_snapshots
from dbt.adapters.jammi.mutable_table.versions.kept_versions import validate_versions_kept
from dbt.adapters.jammi.mutable_table.versions.versions_adapter import VersionsAdapterMixin
from dbt.adapters.jammi.python_models.python_models_adapter import PythonModelsAdapterMixin
from dbt.adapters.jammi.tenancy.tenancy_adapter import TenantGuardAdapterMixin
from dbt.adapters.jammi.topic.definition import TopicDefinition
from dbt.adapters.jammi.topic.topic_adapter import TopicAdapterMixin
from dbt.adapters.jammi.unit_testing.fixtures import fixture_events_sql, is_unit_test
from dbt.adapters.jammi.unit_testing.unit_testing_adapter import UnitTestAdapterMixin

logger = AdapterLogger("Jammi")


# dbt's typed view of the model configs dbt-jammi adds to dbt-spark's: generated from
# the one table of config keys (common/config_keys.py).
JammiConfig = make_dataclass("JammiConfig", adapter_config_fields(), bases=(SparkConfig,))


def _schema_pairs(columns: Sequence[Any]) -> list[tuple[str, str]]:
    pairs = []
    for column in columns:
        if isinstance(column, (tuple, list)):
            pairs.append((str(column[0]), str(column[1])))
        elif isinstance(column, Mapping):
            pairs.append((str(column["name"]), str(column["data_type"])))
        else:
            pairs.append((column.name, column.data_type))
    return pairs


class JammiAdapter(
    MutableRunAdapterMixin,
    VersionsAdapterMixin,
    MutableRulesAdapterMixin,
    TopicAdapterMixin,
    PythonModelsAdapterMixin,
    TenantGuardAdapterMixin,
    UnitTestAdapterMixin,
    DeltaReplaceAdapterMixin,
    SparkAdapter,
):
    ConnectionManager = JammiConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = JammiConfig  # type: ignore[assignment]

    @classmethod
    def type(cls) -> str:
        return "jammi"

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        """dbt-spark's listing without session temp views: `show table extended in <schema>`
        also returns the session's temporary views (no schema), which an embedded session
        keeps for the life of the process and which belong to no schema's catalog.

        dbt-spark answers "no relations" when a table is dropped while the schema is
        being listed; a run would then take an existing table for a missing one. Here
        that listing is repeated instead (``engine/listing.py``), and an Iceberg table of
        Iceberg's session catalog is marked as Iceberg (``marked_iceberg``)."""
        relations = list_relations_retrying_vanished(
            lambda: self._build_spark_relation_list(
                row_list=self.execute_macro(
                    LIST_RELATIONS_MACRO_NAME, kwargs={"schema_relation": schema_relation}
                ),
                relation_info_func=self._get_relation_information,
            ),
            lambda: super(JammiAdapter, self).list_relations_without_caching(schema_relation),
            str(schema_relation),
        )
        return [marked_iceberg(relation) for relation in relations if relation.schema]

    def drop_schema(self, relation: BaseRelation) -> None:
        """dbt-spark's ``drop schema ... cascade``, which an Iceberg catalog service
        refuses for a namespace that holds tables (a REST catalog drops only empty
        namespaces): there the schema's views and tables are dropped first, one by one
        (docs/formats.md, "An Iceberg catalog service")."""
        if self._default_catalog() != DEFAULT_CATALOG:
            schema = quote_identifier(str(relation.schema))
            for kind in ("view", "table"):
                try:
                    names = [row[1] for row in self._run_sql(f"show {kind}s in {schema}")]
                except Exception:  # noqa: BLE001 - no such schema: nothing to empty
                    return
                for name in names:
                    self._run_sql(f"drop {kind} if exists {schema}.{quote_identifier(name)}")
        super().drop_schema(relation)

    @available.parse_list
    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        """dbt-spark's columns, except while dbt types a unit test's fixture for a topic
        the tested model reads with topic_events() or topic_backing_table(): then the
        columns that fixture stands for (``unit_testing/fixtures.py``)."""
        fixture = self.unit_test_fixture_columns(relation)
        if fixture is not None:
            return fixture
        return super().get_columns_in_relation(relation)

    def describe_for_fixture(
        self, relation: BaseRelation
    ) -> Optional[tuple[list[SparkColumn], dict[str, str]]]:
        """Columns and ``jammi.*`` properties of ``relation`` from one ``describe table
        extended`` (the statement dbt-spark's get_columns_in_relation runs); None if the
        relation does not exist."""
        try:
            table: Any = self.execute_macro(
                GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME, kwargs={"relation": relation}
            )
        except DbtRuntimeError as exc:
            message = getattr(exc, "msg", "") or str(exc)
            if any(marker in message for marker in TABLE_OR_VIEW_NOT_FOUND_MESSAGES):
                return None
            raise
        columns = self.parse_describe_extended(relation, table)
        columns = [c for c in columns if c.name not in self.HUDI_METADATA_COLUMNS]
        return columns, describe_properties(table.rows)

    def pre_model_hook(self, config: Mapping[str, Any]) -> Any:
        """Before a node's materialization runs (its SQL, fixtures included, is compiled
        by then): forget how its unit test read its fixtures."""
        self.unit_test_forget_fixtures()
        return super().pre_model_hook(config)

    def post_model_hook(self, config: Mapping[str, Any], context: Any) -> None:
        """After a node's materialization, failed or not: drop a Python model's batch
        view (``python_models/``)."""
        self.python_model_drop_batch()
        super().post_model_hook(config, context)

    # --- definitions -------------------------------------------------------------

    def mutable_table_definition(
        self, model_name: str, columns: Sequence[Any], config: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Validate a mutable_table model and return its definition as a dict."""
        validate_registry_schema(config.get("registry_schema"), f"model '{model_name}'")
        definition = MutableTableDefinition.from_config(model_name, _schema_pairs(columns), config)
        data = definition.to_dict()
        # run options, not part of the recorded definition (table_properties.RECORDED_KEYS)
        subject = f"mutable_table '{model_name}'"
        data["versions_kept"] = validate_versions_kept(config.get("versions_kept"), subject)
        data["expire_snapshots"] = validate_expire_snapshots(
            config.get("expire_snapshots"), subject
        )
        data["tblproperties"] = validate_tblproperties(
            config.get("tblproperties"), subject, bool(data.get("changelog"))
        )
        return data

    @available
    def topic_definition(
        self, model_name: str, columns: Sequence[Any], config: Mapping[str, Any]
    ) -> dict[str, Any]:
        definition = TopicDefinition.from_config(model_name, _schema_pairs(columns), config)
        if config.get("registry_schema"):
            logger.warning(
                f"topic '{model_name}': registry_schema applies to mutable_table registries; "
                "the topics registry stays in the topic's schema, where consumers find it. "
                "Set registry_schema on the mutable_table models only to silence this."
            )
        return definition.to_dict()

    # --- tenant scope ------------------------------------------------------------

    @available.parse_none
    def bound_tenant(self, override: Any = None) -> Optional[str]:
        """The tenant this run is bound to: var jammi_tenant, else the profile field.

        A var that is set must name a tenant: an empty or blank value is an error, never
        a silent fallback to an unbound run (which would write shared rows)."""
        if override is not None:
            return validate_tenant_value(override, "tenant binding (var 'jammi_tenant')")
        tenant = self.config.credentials.tenant
        if tenant is None:
            return None
        return validate_tenant_value(tenant, "profile field 'tenant'")

    # --- SQL rendering helpers ---------------------------------------------------

    @available
    def sql_string(self, value: Any) -> str:
        """A Spark SQL string literal for arbitrary text (tenant values, JSON)."""
        return sql_string_literal(str(value))

    @available
    def quote_column(self, name: str) -> str:
        return quote_identifier(name)

    # --- topic_events() (docs/topic.md, "Consumers") ----------------------------------

    @available
    def topic_events_read(
        self, topic: Any, model: Any, where: Any, tenant_override: Any, execute: bool
    ) -> dict[str, Any]:
        """What ``topic_events(topic, where)`` reads, as ``{sql, post_hook}``. ``where``
        is one boolean expression, checked before anything (common/predicates.py). When
        dbt parses: the topic itself, and whether the model needs the post-hook that
        records what it consumed (not in a dbt unit test). When it runs: in a unit test
        the fixture given for the topic, scoped like the events; otherwise the events
        the model has not consumed yet, their offset range fixed now
        (topic_adapter.topic_unconsumed_events_sql)."""
        subject = f"topic_events in model '{model.get('name')}'"
        if where is not None:
            where = validate_predicate(where, subject, "where")
        unit_test = is_unit_test(model)
        if not execute:
            return {"sql": f"select * from {topic}", "post_hook": not unit_test}
        tenant = self.bound_tenant(tenant_override)
        if unit_test:
            fixture = str(self.unit_test_fixture(model, topic, "events"))
            return {"sql": fixture_events_sql(fixture, tenant, where), "post_hook": False}
        registration = self.topic_registration(topic, str(model.get("name")))
        assert registration is not None  # required_by raises instead
        backing = self.topic_backing_relation(topic, registration)
        sql = self.topic_unconsumed_events_sql(
            topic, registration, backing, str(model.get("unique_id")), tenant, where
        )
        return {"sql": sql, "post_hook": False}

    @available
    def topic_tail(self, schema: str, topic_name: str, tenant_override: Any) -> dict[str, Any]:
        """The live tail's read (python -m dbt.adapters.jammi.topic.tail, docs/tail.md):
        ``{high_water, source}``, the newest committed offset of the topic registered as
        ``topic_name`` in ``schema``'s ``topics`` registry, and its backing table in the
        run's tenant scope."""
        read = self.topic_tail_read(schema, topic_name)
        tenant = self.bound_tenant(tenant_override)
        backing = str(read["backing"])
        source = backing if tenant is None else self.tenant_scoped_sql(backing, tenant)
        return {"high_water": int(read["high_water"]), "source": source}

    # --- session capabilities ----------------------------------------------------

    def session_capabilities(self) -> SessionCapabilities:
        """Probe the session once per connection (cached on the connection handle)."""
        connection = self.connections.get_thread_connection()
        handle = connection.handle
        capabilities = cached_capabilities(handle)
        if capabilities is None:
            _, table = self.execute("SET spark.sql.extensions", fetch=True)
            value = table.rows[0][1] if len(table.rows) else None
            catalog = self._default_catalog()
            _, table = self.execute(f"SET spark.sql.catalog.{catalog}", fetch=True)
            implementation = table.rows[0][1] if len(table.rows) else None
            capabilities = SessionCapabilities.from_extensions(value, implementation, catalog)
            remember_capabilities(handle, capabilities)
        return capabilities

    def delta_available(self) -> bool:
        return self.session_capabilities().delta

    def iceberg_available(self) -> bool:
        return self.session_capabilities().iceberg

    def resolve_file_format(self, requested: Optional[str], model_name: str) -> str:
        """``auto`` picks, in this order: delta when the session has Delta Lake active,
        iceberg when its session catalog is Iceberg's (and Delta is absent), else parquet."""
        requested = validate_file_format((requested or "auto").lower(), f"model '{model_name}'")
        if requested == "auto":
            if self.delta_available():
                return "delta"
            return "iceberg" if self.iceberg_available() else "parquet"
        if requested == "iceberg" and not self.iceberg_available():
            raise JammiValidationError(
                f"model '{model_name}'",
                "file_format 'iceberg' is configured but this Spark session's catalog is not "
                "Iceberg's",
                "add to the profile's server_side_parameters: spark.jars.packages: the "
                f"Iceberg runtime for your Spark ({iceberg_packages_hint()}), "
                "spark.sql.extensions: org.apache.iceberg.spark.extensions."
                "IcebergSparkSessionExtensions, spark.sql.catalog.spark_catalog: "
                "org.apache.iceberg.spark.SparkSessionCatalog, "
                "spark.sql.catalog.spark_catalog.type: hive (or an Iceberg catalog service "
                "as the session's spark.sql.defaultCatalog, docs/formats.md) -- or set "
                "file_format: auto",
            )
        if requested == "delta" and not self.delta_available():
            raise JammiValidationError(
                f"model '{model_name}'",
                "file_format 'delta' is configured but this Spark session has no Delta Lake",
                "install the extra (pip install 'dbt-jammi[delta]') and add to the profile's "
                "server_side_parameters: spark.jars.packages: the Delta release for your "
                f"Spark ({packages_hint()}), "
                "spark.sql.extensions: io.delta.sql.DeltaSparkSessionExtension, "
                "spark.sql.catalog.spark_catalog: org.apache.spark.sql.delta.catalog."
                "DeltaCatalog -- or set file_format: auto",
            )
        return requested
