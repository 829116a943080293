"""A kept version restored (``rollback_mutable_table``'s commits; its plan is
versions/versions_service.py's): on Delta and Iceberg a MERGE of the kept rows
(``rollback_merge``), on parquet and orc the next version written as a run writes it
(``rollback_rewrite``). Either repairs the changelog first, publishes what it committed
and records the table's definition, as a run does (run_service.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.mutable_table.apply_service import MutableApplyService
from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, TableWrite
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService


class RollbackService:
    """``rollback_merge`` and ``rollback_rewrite`` (the face's ``mutable_rollback_*``,
    impl.py). ``record``: how a table's definition is recorded after a commit
    (``MutableRunService.record_definition``)."""

    def __init__(
        self,
        sql: SqlSession,
        rules: RulesService,
        commits: CommitService,
        versions: VersionsService,
        apply: MutableApplyService,
        record: Callable[..., None],
    ) -> None:
        self._sql = sql
        self._rules = rules
        self._commits = commits
        self._versions = versions
        self._apply = apply
        self._record = record

    def rollback_merge(
        self,
        definition: dict[str, Any],
        relation: Any,
        state: Mapping[str, Any],
        plan: Mapping[str, Any],
        model_name: str,
        expire_snapshots: bool,
    ) -> dict[str, Any]:
        """``rollback_mutable_table``'s commit on Delta and Iceberg: the changelog
        repaired, the MERGE of the kept rows committed (Iceberg with a changelog: through
        the run's branch with the changelog's records of its difference; a rollback that
        changes nothing commits nothing to publish), the tombstones of later versions
        dropped, the changelog published, and Iceberg's snapshots beyond
        ``versions_kept`` expired where the model opts in. Returns the MERGE's counts."""
        file_format = str(state["file_format"])
        self._rules.changelog_repair(definition, relation, state)
        stored_as = table_format(file_format)
        if stored_as.merges_on_branch and definition.get("changelog_topic"):
            counts = self._rollback_merge_logged(definition, relation, plan, model_name)
        else:
            counts = self._commits.commit_merge(plan["merge_sql"], model_name, True)["counts"]
        self._rules.tombstones_rollback(
            definition, relation, file_format, plan["history"], plan["version"]
        )
        if definition.get("changelog_topic"):
            self._rules.changelog_publish(definition, relation, None)
        if stored_as.expires_snapshots and expire_snapshots:
            self._versions.expire_iceberg_snapshots(
                relation, int(definition["versions_kept"]), model_name
            )
        return dict(counts)

    def _rollback_merge_logged(
        self, definition: Mapping[str, Any], relation: Any, plan: Mapping[str, Any], model: str
    ) -> Mapping[str, Any]:
        """Iceberg with a changelog: the rollback's difference as a temp view, counted;
        its records committed with the MERGE on the run's branch (changelog_iceberg.py)."""
        change_set = relation.incorporate(
            path={"identifier": f"{relation.identifier}__jammi_rollback_changes"}, type="view"
        ).include(database=False, schema=False)
        self._sql.trusted(
            f"create or replace temporary view {change_set} as\n{plan['change_set_sql']}"
        )
        try:
            changes = self._commits.change_counts(change_set)
            if changes["total"] == 0:
                merged = self._commits.commit_merge(plan["merge_sql"], model, True)
            else:
                records = Transaction()
                write = TableWrite(definition, relation, "iceberg", plan["merge_sql"])
                self._rules.add_branch_records(
                    records, write, Attempt(change_set=change_set, counts=changes)
                )
                merged = self._commits.commit_merge_on_branch(
                    plan["merge_sql"], relation, model, True, records
                )
        finally:
            self._sql.trusted(f"drop view if exists {change_set}")
        return merged["counts"]

    def rollback_rewrite(
        self,
        definition: dict[str, Any],
        relation: Any,
        state: Mapping[str, Any],
        plan: Mapping[str, Any],
        staging: Any,
        run_id: str,
        next_state_sql: str,
        registry_schema: Optional[str],
        invocation_id: str,
    ) -> dict[str, Any]:
        """``rollback_mutable_table``'s commit on parquet and orc, as a run's: the
        changelog repaired, the difference from the kept version staged (``staging``,
        whose next state is ``next_state_sql``) and counted; when it changes rows, the
        new version (with the kept version's tombstones) committed by compare-and-swap,
        published to the changelog and its definition recorded. The staging table is
        dropped in any case. Returns the counts."""
        file_format = str(state["file_format"])
        self._rules.changelog_repair(definition, relation, state)
        cleanup = [f"drop table if exists {staging}"]
        try:
            counts = self._apply.stage_change_set(staging, plan["change_set_sql"], count=True)[
                "counts"
            ]
            if counts["total"] > 0:
                tombstones_sql = self._rules.tombstones_rollback(
                    definition,
                    relation,
                    file_format,
                    plan["history"],
                    plan["version"],
                    plan["location"],
                )
                location = self._apply.commit_rewrite(
                    TableWrite(definition, relation, file_format, next_state_sql),
                    Attempt(
                        change_set=staging,
                        counts=counts,
                        run_id=run_id,
                        cleanup=tuple(cleanup),
                        invocation_id=invocation_id,
                        planned_location=state["location"],
                        tombstones_sql=tombstones_sql,
                        kind="rollback",
                    ),
                )
                if definition.get("changelog_topic"):
                    self._rules.changelog_publish(definition, relation, location)
                self._record(
                    definition,
                    state,
                    relation,
                    file_format,
                    location,
                    registry_schema,
                    invocation_id,
                )
        finally:
            self._sql.trusted(cleanup[0])
        return counts
