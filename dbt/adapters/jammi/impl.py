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

from dbt.adapters.jammi.common.columns import schema_pairs
from dbt.adapters.jammi.common.config_keys import adapter_config_fields
from dbt.adapters.jammi.common.face import hands_to
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.relations import Relations
from dbt.adapters.jammi.common.sql_session import DEFAULT_CATALOG, SqlSession
from dbt.adapters.jammi.common.validation import (
    quote_identifier,
    sql_string_literal,
)
from dbt.adapters.jammi.connections import JammiConnectionManager
from dbt.adapters.jammi.engine.delta_replace_service import DeltaReplaceService
from dbt.adapters.jammi.engine.listing import list_relations_retrying_vanished, marked_iceberg
from dbt.adapters.jammi.mutable_table.apply_service import MutableApplyService
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.drift_service import DriftService
from dbt.adapters.jammi.mutable_table.rollback_service import RollbackService
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from dbt.adapters.jammi.mutable_table.run_service import MutableRunService
from dbt.adapters.jammi.mutable_table.session_formats import SessionFormats
from dbt.adapters.jammi.mutable_table.steps import StepRunner
from dbt.adapters.jammi.mutable_table.table_properties import describe_properties
from dbt.adapters.jammi.mutable_table.table_state import TableStateService
from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService
from dbt.adapters.jammi.python_models.python_models_service import PythonModelsService
from dbt.adapters.jammi.tenancy.tenancy_service import TenancyService
from dbt.adapters.jammi.topic.definition import TopicDefinition
from dbt.adapters.jammi.topic.registry_service import TopicRegistryService
from dbt.adapters.jammi.topic.topic_service import TopicService
from dbt.adapters.jammi.unit_testing.fixtures import fixture_events_sql, is_unit_test
from dbt.adapters.jammi.unit_testing.unit_testing_service import UnitTestingService

logger = AdapterLogger("Jammi")


# dbt's typed view of the model configs dbt-jammi adds to dbt-spark's: generated from
# the one table of config keys (common/config_keys.py).
JammiConfig = make_dataclass("JammiConfig", adapter_config_fields(), bases=(SparkConfig,))


class JammiAdapter(SparkAdapter):
    ConnectionManager = JammiConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = JammiConfig  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        """dbt's adapter, then the services its face hands calls to, each given the SQL
        interface (common/sql_session.py) and the services it uses."""
        super().__init__(config, mp_context)
        # the adapter's execute looked up at each statement, as the mixins' self.execute
        # was: whatever wraps the adapter's execute (a test, a hook) sees every statement
        self.sql_session = sql = SqlSession(
            lambda *args, **kwargs: self.execute(*args, **kwargs),
            self.connections,
            config.credentials,
        )
        relations = Relations(
            create=self.Relation.create,
            listed=self._listed_relations,
            get_relation=self.get_relation,
            drop_relation=self.drop_relation,
        )
        self._formats = SessionFormats(sql)
        self._versions = VersionsService(sql)
        self._drift = DriftService(sql, self._formats)
        self._steps = StepRunner(sql)
        self._tables = TableStateService(
            sql, self._drift, self.parse_describe_extended, self.HUDI_METADATA_COLUMNS
        )
        self._commits = CommitService(sql, self._steps, self._versions, self.cache)
        self._tenancy = TenancyService(sql)
        self._unit_testing = UnitTestingService(sql, self.describe_for_fixture, self.Column)
        self._python_models = PythonModelsService(sql)
        self._delta_replace = DeltaReplaceService(sql)
        # through the face's resolve_file_format: the one seam for what the session stores
        resolve = lambda requested, model: self.resolve_file_format(requested, model)  # noqa: E731
        self._topic_registry = TopicRegistryService(sql, relations, resolve)
        self._topics = TopicService(sql, self._topic_registry, relations)
        self._rules = RulesService(sql, relations, self._topic_registry)
        self._apply = MutableApplyService(
            sql, self._rules, self._commits, self._steps, self._tables, self._versions
        )
        self._run = MutableRunService(
            sql, self._formats, self._drift, self._tables, self._rules, self._versions, self._apply
        )
        self._rollbacks = RollbackService(
            sql,
            self._rules,
            self._commits,
            self._versions,
            self._apply,
            self._run.record_definition,
        )

    def _listed_relations(self, database: Any, schema: Any) -> Optional[list[BaseRelation]]:
        """dbt's cached relations of a schema it listed in this invocation, else None."""
        if not self._schema_is_cached(database, schema):
            return None
        return list(self.cache.get_relations(database, schema))

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
        if self.sql_session.default_catalog() != DEFAULT_CATALOG:
            schema = quote_identifier(str(relation.schema))
            for kind in ("view", "table"):
                try:
                    names = [row[1] for row in self.sql_session.rows(f"show {kind}s in {schema}")]
                except Exception:  # noqa: BLE001 - no such schema: nothing to empty
                    return
                for name in names:
                    self.sql_session.rows(
                        f"drop {kind} if exists {schema}.{quote_identifier(name)}"
                    )
        super().drop_schema(relation)

    @available.parse_list
    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        """dbt-spark's columns, except while dbt types a unit test's fixture for a topic
        the tested model reads with topic_events() or topic_backing_table(): then the
        columns that fixture stands for (``unit_testing/fixtures.py``)."""
        fixture = self._unit_testing.fixture_columns(relation)
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
        self._unit_testing.forget_fixtures()
        return super().pre_model_hook(config)

    def post_model_hook(self, config: Mapping[str, Any], context: Any) -> None:
        """After a node's materialization, failed or not: drop a Python model's batch
        view (``python_models/``)."""
        self._python_models.drop_batch()
        super().post_model_hook(config, context)

    # --- definitions -------------------------------------------------------------

    @available
    def topic_definition(
        self, model_name: str, columns: Sequence[Any], config: Mapping[str, Any]
    ) -> dict[str, Any]:
        definition = TopicDefinition.from_config(model_name, schema_pairs(columns), config)
        if config.get("registry_schema"):
            logger.warning(
                f"topic '{model_name}': registry_schema applies to mutable_table registries; "
                "the topics registry stays in the topic's schema, where consumers find it. "
                "Set registry_schema on the mutable_table models only to silence this."
            )
        return definition.to_dict()

    # --- SQL rendering helpers ---------------------------------------------------

    @available
    def sql_string(self, value: Any) -> str:
        """A Spark SQL string literal for arbitrary text (tenant values, JSON)."""
        return sql_string_literal(str(value))

    @available
    def quote_column(self, name: str) -> str:
        return quote_identifier(name)

    # --- the faces that hand a call to a service, one line each (common/face.py) ---------

    # tenant scope (tenancy/tenancy_service.py)
    bound_tenant = hands_to("_tenancy", TenancyService.bound_tenant, parse_none=True)
    tenant_guard_scoped_sql = hands_to("_tenancy", TenancyService.scoped_sql)
    tenant_guard_trust = hands_to("_tenancy", TenancyService.trust)
    tenant_scoped_sql = hands_to("_tenancy", TenancyService.scoped_relation)

    # dbt unit tests, Python models, a Delta rebuild
    unit_test_fixture = hands_to("_unit_testing", UnitTestingService.fixture)
    unit_test_check_fixture_values = hands_to(
        "_unit_testing", UnitTestingService.check_fixture_values
    )
    python_model_batch_sql = hands_to("_python_models", PythonModelsService.batch_sql)
    delta_replace_plan = hands_to("_delta_replace", DeltaReplaceService.plan)

    # a mutable_table run (mutable_table/run_service.py, apply_service.py)
    mutable_run_start = hands_to("_run", MutableRunService.run_start)
    mutable_changelog_prepare = hands_to("_run", MutableRunService.changelog_prepare)
    mutable_plan_prepare = hands_to("_run", MutableRunService.plan_prepare)
    mutable_stage_change_set = hands_to("_apply", MutableApplyService.stage_change_set)
    mutable_commit = hands_to("_apply", MutableApplyService.commit)
    mutable_outcome = hands_to("_apply", MutableApplyService.outcome)
    mutable_adopt = hands_to("_apply", MutableApplyService.adopt)
    mutable_drop_table = hands_to("_apply", MutableApplyService.drop_table)
    mutable_run_finish = hands_to("_run", MutableRunService.run_finish)
    mutable_record_definition = hands_to("_run", MutableRunService.record_definition)
    mutable_expire_start = hands_to("_run", MutableRunService.expire_start)
    mutable_rollback_merge = hands_to("_rollbacks", RollbackService.rollback_merge)
    mutable_rollback_rewrite = hands_to("_rollbacks", RollbackService.rollback_rewrite)

    # the stored table (mutable_table/table_state.py), a drifting batch (drift_service.py)
    mutable_full_refresh_allowed = hands_to("_tables", TableStateService.full_refresh_allowed)
    mutable_table_state = hands_to("_tables", TableStateService.table_state)
    mutable_batch_failure = hands_to("_tables", TableStateService.batch_failure)
    mutable_planner = hands_to("_tables", TableStateService.planner)
    mutable_evolve_schema = hands_to("_drift", DriftService.evolve_schema)

    # the row rules' records (mutable_table/rules/rules_service.py)
    mutable_tombstones_apply = hands_to("_rules", RulesService.tombstones_apply)
    changelog_publish = hands_to("_rules", RulesService.changelog_publish)

    # kept versions (mutable_table/versions/versions_service.py)
    mutable_history = hands_to("_versions", VersionsService.history)
    mutable_as_of = hands_to("_versions", VersionsService.as_of)
    mutable_rollback_plan = hands_to("_versions", VersionsService.rollback_plan)

    # a topic's publish (topic/topic_service.py, topic/registry_service.py)
    topic_registration = hands_to("_topic_registry", TopicRegistryService.registration)
    topic_register = hands_to("_topic_registry", TopicRegistryService.register)
    topic_prepare_staging = hands_to("_topics", TopicService.prepare_staging)
    topic_staged_rows = hands_to("_topics", TopicService.staged_rows)
    topic_apply_retention = hands_to("_topics", TopicService.apply_retention)
    topic_publish = hands_to("_topics", TopicService.publish)
    topic_commit_consumed = hands_to("_topics", TopicService.commit_consumed)

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
        (topic_service.TopicService.unconsumed_events_sql)."""
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
        consumer = str(model.get("unique_id"))
        sql = self._topics.events_read(topic, str(model.get("name")), consumer, tenant, where)
        return {"sql": sql, "post_hook": False}

    @available
    def topic_tail(self, schema: str, topic_name: str, tenant_override: Any) -> dict[str, Any]:
        """The live tail's read: ``{high_water, source}`` (docs/tail.md)."""
        return self._topics.tail(schema, topic_name, self.bound_tenant(tenant_override))

    # --- the session's formats (mutable_table/session_formats.py) ----------------------------

    def delta_available(self) -> bool:
        return self._formats.delta_available()

    def iceberg_available(self) -> bool:
        return self._formats.iceberg_available()

    def resolve_file_format(self, requested: Optional[str], model_name: str) -> str:
        """The format a model's ``file_format`` names on this session (``auto``: delta,
        iceberg, else parquet), or the profile's fix when the session lacks it."""
        return self._formats.resolve(requested, model_name)
