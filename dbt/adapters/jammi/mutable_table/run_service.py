"""A mutable_table run's start (``adapter.mutable_run_start``) and its finish
(``adapter.mutable_run_finish``, with ``mutable_record_definition``, which the version
operations share), one call each over the services it is given: the stored
table's state and drift (table_state.py, drift_service.py), the session's formats
(session_formats.py), the changelog (rules/rules_service.py), the plan and commit
(commit/commit_service.py), the kept versions (versions/versions_service.py); its
commits are apply_service.py's. The start's steps and their order are run_start.py's.
The face (impl.py) hands its ``mutable_*`` calls here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common import run_report
from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine.describe import query_columns, result_rows
from dbt.adapters.jammi.mutable_table import (
    hive_adoption,
    redelivery,
    rule_columns,
    run_config,
    run_start,
    table_records,
    tblproperties_config,
    version_locations,
)
from dbt.adapters.jammi.mutable_table.apply_service import MutableApplyService
from dbt.adapters.jammi.mutable_table.commit.attempt import AttemptOutcome
from dbt.adapters.jammi.mutable_table.commit.run_plan import RunPlan, plan_run
from dbt.adapters.jammi.mutable_table.drift_service import DriftService
from dbt.adapters.jammi.mutable_table.format_reads import format_reads
from dbt.adapters.jammi.mutable_table.iceberg_support import check_file_format_support
from dbt.adapters.jammi.mutable_table.rules import batch_rewrites, ttl
from dbt.adapters.jammi.mutable_table.rules.changelog import published_mark
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from dbt.adapters.jammi.mutable_table.rules.ttl import expire_definition
from dbt.adapters.jammi.mutable_table.run_definition import RunDefinition
from dbt.adapters.jammi.mutable_table.session_formats import SessionFormats
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.table_state import TableStateService
from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService

logger = AdapterLogger("Jammi")


class MutableRunService:
    """A mutable_table run's start and finish: ``run_start``, ``plan_prepare``,
    ``changelog_prepare``, ``expire_start``, ``record_definition``, ``run_finish`` (the
    face's ``mutable_*``, impl.py)."""

    def __init__(
        self,
        sql: SqlSession,
        formats: SessionFormats,
        drift: DriftService,
        tables: TableStateService,
        rules: RulesService,
        versions: VersionsService,
        apply: MutableApplyService,
    ) -> None:
        self._sql = sql
        self._formats = formats
        self._drift = drift
        self._tables = tables
        self._rules = rules
        self._versions = versions
        self._apply = apply

    def run_start(
        self,
        model: Mapping[str, Any],
        target: Any,
        relation: Any,
        compiled_sql: str,
        tenant: Optional[str],
        full_refresh: Any,
        fail_at: Any = None,
    ) -> run_start.RunStart:
        """Everything a run decides and checks before it writes (run_start.py), as a
        ``RunStart``. ``target``: the model's table; ``relation``: the table that holds
        the model's name, or None (a view that did is dropped by the run: its run is a
        first run); ``full_refresh``: dbt's flag."""
        model_name = str(model["name"])
        if relation is None and hive_adoption.recover(
            str(target), self._sql.table_listed, self._sql.table_properties, self._sql.trusted
        ):
            relation = target
        existing = relation is not None
        config = model.get("config") or {}
        failure = run_start.failure_phase(fail_at)
        rebuild = bool(existing) and run_config.full_refresh_allowed(
            full_refresh, config.get("full_refresh")
        )
        described = self._sql.trusted(f"describe query {compiled_sql}")
        batch_columns = query_columns(result_rows(described))
        batch_definition = run_config.run_definition(
            model_name,
            batch_columns,
            run_config.definition_config(config, model.get("unrendered_config") or {}),
        )
        requested = run_config.requested_file_format(
            model.get("unrendered_config") or {}, config.get("file_format")
        )
        state = None
        if existing:
            adopt: dict[str, Any] = (
                {"rebuild": True}
                if rebuild
                else {"definition": batch_definition, "tenant": tenant, "requested": requested}
            )
            state = self._tables.table_state(
                relation, None, adopt, model_name, config.get("registry_schema")
            )
        kept = state if state is not None and not rebuild else None
        adopting = kept is not None and kept.get("adoption") is not None
        if kept is None:
            definition = batch_definition
            file_format = self._formats.resolve(requested, model_name)
            new_columns: list[list[str]] = []
            checked_casts: list[list[str]] = []
            evolution: list[str] = []
            new_properties: dict[str, str] = {}
        else:
            reconciled = self._drift.reconciled_schema(
                model_name, batch_definition, kept, requested
            )
            definition = RunDefinition.of(reconciled["definition"])
            file_format = kept["file_format"]
            new_columns = reconciled["new_columns"]
            checked_casts = reconciled["checked_casts"]
            evolution = run_start.evolution_statements(str(target), reconciled)
            new_properties = tblproperties_config.changed_properties(
                definition.get("tblproperties") or {}, kept["table_properties"]
            )
        # the batch as the run reads it: a version in rule_columns also under its stored
        # name (rule_columns.py), a bound run's rows, the rules' rewrites applied
        source_columns = rule_columns.aliased_batch_columns(definition, batch_columns)
        definition = definition.with_run_values(batch_columns=[name for name, _ in source_columns])
        check_file_format_support(definition, file_format, model_name)
        changelog = self._rules.changelog_check(definition, target, kept, file_format)
        source = rule_columns.aliased_source_sql(
            definition, self._tenant_bound_source(model_name, definition, compiled_sql, tenant)
        )
        rewritten = batch_rewrites.rewritten_batch(
            definition,
            source,
            source_columns,
            str(target) if kept is not None else None,
            tenant,
            self._sql.rows,
        )
        source, source_columns = rewritten.source, rewritten.columns
        self._drift.check_exact_values(model_name, definition, checked_casts, file_format, source)
        collapsed_source = redelivery.collapsed_batch_sql(source, source_columns)
        collapses: dict[str, Any] = {
            "collapsed_source": collapsed_source,
            "always": redelivery.collapses_always(definition),
        }
        collapsed = None
        if collapses["always"]:
            count = self._sql.rows(run_start.collapsed_count_sql(source, collapsed_source))
            collapsed = int(count[0][0])
            source = collapsed_source
        first = run_start.writes_first(
            rebuild, adopting, new_columns, evolution, new_properties, changelog
        )
        plan = self._plan(definition, file_format, kept is not None, first)
        definition = definition.with_run_values(checks_in_plan=plan.checks == "in_plan")
        return run_start.RunStart(
            fail_at=failure,
            run_id=version_locations.new_run_id(),
            rebuild=rebuild,
            full_refresh_ignored=bool(existing and full_refresh and not rebuild),
            batch_columns=[list(c) for c in batch_columns],
            definition=definition,
            state=state,
            adopting=adopting,
            file_format=file_format,
            new_columns=new_columns,
            evolution=evolution,
            new_properties=new_properties,
            changelog=changelog,
            batch_source=source,
            redelivery=collapses,
            collapsed=collapsed,
            truncates=rewritten.truncate_rows,
            plan=plan,
        )

    def _plan(
        self, definition: Mapping[str, Any], file_format: str, existing: bool, first: Any
    ) -> RunPlan:
        reads_version = table_format(file_format).plan_reads_spark_version and existing
        spark_version = self._sql.spark_version() if reads_version else ""
        return plan_run(definition, file_format, existing, first, spark_version)

    def _tenant_bound_source(
        self,
        model_name: str,
        definition: Mapping[str, Any],
        compiled_sql: str,
        tenant: Optional[str],
    ) -> str:
        """The batch as the run reads it: a bound run's rows of a ``tenant_from`` model
        (the rows of other tenants and shared rows skipped, and said so)."""
        source, skipped_sql = run_start.tenant_bound_source(
            definition, run_start.batch_source(compiled_sql), tenant
        )
        if skipped_sql is not None:
            skipped = int(self._sql.rows(skipped_sql)[0][0] or 0)
            if skipped:
                logger.info(
                    run_start.skipped_rows_message(
                        model_name, str(tenant), str(definition["tenant_from"]), skipped
                    )
                )
        return source

    def changelog_prepare(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        state: Any,
        file_format: str,
        checked: Optional[dict[str, Any]] = None,
    ) -> RunDefinition:
        """The run's definition with its changelog topic (``changelog_prepare``: the topic
        registered on a first run, the first version it publishes), a run value."""
        topic = self._rules.changelog_prepare(
            dict(definition), relation, state, file_format, checked
        )
        return RunDefinition.of(definition).with_run_values(changelog_topic=topic)

    def plan_prepare(
        self, definition: Mapping[str, Any], relation: Any, state: Any, file_format: str
    ) -> RunDefinition:
        """Before each plan (every attempt): what a run that stopped after its commit left
        is published (the changelog's repair); then the definition the attempt plans
        with, holding its run values: its clock (``now_ms``: the engine's
        ``_written_at`` and the TTL cutoff agree), whether the change set finds the
        expired rows itself (``ttl_expired_in_plan``), the live tombstones it reads and
        their clock, and where identity numbering starts (``identity_from``,
        ``identity_guard``)."""
        self._rules.changelog_repair(dict(definition), relation, state)
        planned = RunDefinition.of(definition).with_run_values(
            now_ms=now_ms(), ttl_expired_in_plan=ttl.expired_in_plan(definition)
        )
        planned = planned.with_run_values(
            **self._rules.tombstones_prepare(planned, relation, state, file_format)
        )
        plan_target = relation if state is not None else None
        return planned.with_run_values(
            **self._rules.identity_prepare(planned, plan_target, state, file_format)
        )

    def expire_start(
        self,
        table: str,
        relation: Any,
        state: Mapping[str, Any],
        ttl_ms: Any,
        versions_kept: Any,
    ) -> dict[str, Any]:
        """``expire_mutable_table``'s start: the table's recorded definition with the
        operation's ``ttl_ms`` (rules/ttl.py), its ``versions_kept``, its changelog
        prepared (what it expires is published like any committed version), the plan
        of a run of the model with an empty output, and its ``run_id``.
        ``versions_kept``: the model's config value (None: the default), checked here."""
        definition = RunDefinition.of(
            expire_definition(table, state.get("definition"), ttl_ms)
        ).with_run_values(
            versions_kept=self._versions.kept_settings(
                {"versions_kept": versions_kept}, str(relation.identifier)
            )["versions_kept"]
        )
        file_format = str(state["file_format"])
        definition = definition.with_run_values(
            changelog_topic=self._rules.changelog_prepare(
                dict(definition), relation, state, file_format
            )
        )
        return {
            "definition": definition,
            "plan": self._plan(definition, file_format, True, {}),
            "run_id": version_locations.new_run_id(),
        }

    def record_definition(
        self,
        definition: Mapping[str, Any],
        state: Mapping[str, Any],
        relation: Any,
        file_format: str,
        committed_location: Optional[str],
        registry_schema: Optional[str],
        invocation_id: str,
    ) -> None:
        """After an existing table was applied to (a run, an expiry, a rollback): the
        definition and the version (rewrite formats) on the table when either changed or
        the recorded one was unreadable; a registry row when the definition changed; then
        the versions beyond ``versions_kept``, and what other runs provably abandoned,
        removed (kept_versions.py)."""
        changed = table_records.definition_changed(definition, state.get("definition"))
        location = committed_location or state.get("location")
        version = version_locations.parse_version(location) if location else None
        if committed_location or changed or state.get("property_stale"):
            # a run's definition carries its changelog's topic, and a run reaches here
            # only after publishing what it committed (an expiry's stored one does not)
            published = published_mark(definition, committed_location)
            clause = table_records.properties_clause(
                definition, file_format, version, published=published
            )
            self._sql.trusted(f"alter table {relation} set {clause}")
        if changed:
            registry = self._tables.registry_relation(relation, registry_schema, definition)
            self._sql.trusted(
                table_records.registry_row_sql(
                    str(registry), str(relation), definition, file_format, invocation_id
                )
            )
        if location and version is not None:
            self._versions.sweep(
                relation,
                location,
                definition.get("versions_kept"),
                committed_location is not None,
                version_locations.new_run_id(),
            )

    def run_finish(
        self,
        definition: Mapping[str, Any],
        state: Optional[Mapping[str, Any]],
        relation: Any,
        file_format: str,
        outcome: AttemptOutcome,
        collapsed: Any,
        registry_schema: Optional[str],
        invocation_id: str,
        truncate_rows: Any = None,
    ) -> Any:
        """After the commit: the definition recorded (an existing table's), the run's
        own relations dropped, Iceberg's snapshots beyond ``versions_kept`` expired
        (``expire_snapshots``), and the run's ``adapter_response`` (common/run_report.py)
        with the table's version after it."""
        committed_location = outcome.location
        if state is not None:
            self.record_definition(
                definition,
                state,
                relation,
                file_format,
                committed_location,
                registry_schema,
                invocation_id,
            )
        for run_relation in outcome.run_relations:
            kind = "table" if getattr(run_relation, "type", None) == "table" else "view"
            self._sql.trusted(f"drop {kind} if exists {run_relation}")
        if definition.get("expire_snapshots"):
            self._versions.expire_iceberg_snapshots(
                relation, int(definition["versions_kept"]), str(definition["table_id"])
            )
        counts = outcome.counts or {}
        location = committed_location or (state or {}).get("location")
        version = format_reads(file_format, self._sql.rows).version_after(
            relation, counts, location
        )
        return run_report.mutable_run_response(
            counts,
            version,
            None if collapsed is None else int(collapsed),
            None if truncate_rows is None else int(truncate_rows),
        )
