"""The commits of a mutable_table run, one call each (mixed into the run's face,
run_adapter.py): an attempt's commit phase (``adapter.mutable_commit``: a first run's
create, a MERGE, or the rewrite formats' next version; commit/version_commit.py holds
the create's and the rewrite's protocols) and a rollback's commit on Delta and Iceberg
(``adapter.mutable_rollback_merge``); and what they build on: the rewrite applier's
staged change set (``adapter.mutable_stage_change_set``) and a permitted rebuild's drop
(``adapter.mutable_drop_table``). Each draws on the commit paths
(commit_adapter), the rules' steps (rules_adapter: identity, tombstones, changelog)
and the kept versions (versions_adapter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.mutable_table import hive_adoption, table_properties, version_locations
from dbt.adapters.jammi.mutable_table.commit import version_commit
from dbt.adapters.jammi.mutable_table.commit.commit_adapter import MutableCommitAdapterMixin
from dbt.adapters.jammi.mutable_table.commit.merge_commit import MERGE_FORMATS
from dbt.adapters.jammi.mutable_table.rules.rules_adapter import MutableRulesAdapterMixin
from dbt.adapters.jammi.mutable_table.versions.versions_adapter import VersionsAdapterMixin

logger = AdapterLogger("Jammi")


class MutableApplyAdapterMixin(
    MutableCommitAdapterMixin, VersionsAdapterMixin, MutableRulesAdapterMixin
):
    """``adapter.mutable_commit``, ``mutable_rollback_merge``, ``mutable_adopt``,
    ``mutable_stage_change_set``, ``mutable_drop_table``."""

    def _commit_merge(
        self,
        definition: Mapping[str, Any],
        target: Any,
        merge_sql: str,
        file_format: str,
        fail_at: Optional[str],
        last_attempt: bool,
        change_set: Any = None,
        tombstone_insert: Optional[str] = None,
        changes: int = 0,
    ) -> dict[str, Any]:
        """The MERGE applier's commit: ``{committed, counts}`` (``rejected``: the batch
        check that stopped a batch-sourced MERGE; ``committed`` False when a concurrent
        run committed first and the run re-plans). The test hook's stop before it; then
        on Iceberg, a batch-sourced MERGE (no ``change_set``) counted from its own
        snapshot, or a change set's MERGE through the run's branch when appends must
        commit with it (the plan's tombstones, the identity column's mark, the changelog's
        records: ``mutable_branch_records``); else one MERGE, Delta's commit recording
        where identity numbering started."""
        if fail_at in ("write", "before_commit"):
            self._run_sql(version_commit.failure_sql(fail_at))
        model_name = str(definition["table_id"])
        if file_format == "iceberg" and change_set is None:
            return self.mutable_commit_merge(merge_sql, model_name, last_attempt, None, target)
        if file_format == "iceberg":
            records = self.mutable_branch_records(
                definition, target, change_set, tombstone_insert, changes
            )
            if records:
                return self.mutable_commit_merge_on_branch(
                    merge_sql, target, model_name, last_attempt, records
                )
        return self.mutable_commit_merge(
            merge_sql, model_name, last_attempt, definition.get("identity_from")
        )

    @available
    def mutable_commit(
        self,
        kind: str,
        definition: dict[str, Any],
        target: Any,
        file_format: str,
        statement: str,
        attempt: Mapping[str, Any],
    ) -> dict[str, Any]:
        """An attempt's commit phase, all or nothing: ``{committed, counts, location,
        rejected}``. ``kind``: ``create`` (a first run or a permitted rebuild; its
        ``statement`` the table's first rows, ``location`` the rewrite formats' first
        version directory), ``merge`` (the MERGE formats; ``statement`` the MERGE;
        ``rejected`` the batch check that stopped a batch-sourced one) or ``rewrite``
        (parquet/orc; ``statement`` the next version's rows, ``location`` the committed
        directory). ``committed`` is False when a concurrent run committed first and
        the attempt is not the last: the run re-plans. ``attempt``: ``fail_at``,
        ``last_attempt``, and what the kind uses of ``change_set``, ``counts``,
        ``run_id``, ``cleanup`` (the run's relations, dropped on failure),
        ``registry_schema``, ``invocation_id``, ``planned_location``,
        ``tombstones_sql``, ``tombstone_insert``."""
        fail_at = attempt.get("fail_at")
        last_attempt = bool(attempt.get("last_attempt", True))
        counts = attempt.get("counts")
        if kind == "merge":
            changes = int(counts["total"]) if counts else 0
            merged = self._commit_merge(
                definition,
                target,
                statement,
                file_format,
                fail_at,
                last_attempt,
                attempt.get("change_set"),
                attempt.get("tombstone_insert"),
                changes,
            )
            return {"location": None, **merged}
        if kind == "create":
            location = self._commit_create(
                definition,
                target,
                attempt["change_set"],
                statement,
                file_format,
                attempt["run_id"],
                fail_at,
                attempt.get("cleanup") or [],
                counts,
                attempt.get("registry_schema"),
                attempt["invocation_id"],
            )
            return {"committed": True, "counts": counts, "location": location}
        if kind != "rewrite":
            raise ValueError(f"a commit is a create, a merge or a rewrite, not {kind!r}")
        location = self.mutable_commit_rewrite(
            definition,
            target,
            attempt["change_set"],
            statement,
            file_format,
            attempt["planned_location"],
            attempt["run_id"],
            fail_at,
            attempt.get("cleanup") or [],
            last_attempt,
            counts,
            attempt["invocation_id"],
            "run",
            attempt.get("tombstones_sql"),
        )
        return {"committed": location is not None, "counts": counts, "location": location}

    @available
    def mutable_adopt(
        self,
        target: Any,
        state: Mapping[str, Any],
        definition: Mapping[str, Any],
        registry_schema: Optional[str],
        invocation_id: str,
        model_name: str,
    ) -> str:
        """What adoption adds before the run writes (mutable_table/adoption.py): the
        registry, and the tenant_id column (NULL: the stored rows are shared rows). Each
        step is idempotent, so a run stopped between them is completed by the next. A
        Hive-format table's rows are first rewritten as the run's format
        (hive_adoption.py)."""
        conversion = (state.get("adoption_plan") or {}).get("hive_conversion")
        if conversion is not None:
            self._convert_hive_table(hive_adoption.HiveConversion(**conversion), model_name)
        rows = self._run_sql(f"select count(*) from {target}")[0][0]
        logger.info(
            f"mutable_table '{model_name}': adopting {target} (built by another "
            f"materialization) with its {rows} stored row(s); they are kept as shared rows "
            "(tenant_id NULL)"
        )
        records = self.mutable_table_records(
            definition, target, str(state["file_format"]), registry_schema, invocation_id
        )
        self.mutable_execute_all_or_nothing(
            [{"sql": records["create_registry"], "tolerate_exists": True}]
        )
        if (state.get("adoption_plan") or {}).get("add_tenant_column"):
            self._run_sql(f"alter table {target} add columns (`tenant_id` string)")
        return ""

    def _convert_hive_table(
        self, conversion: hive_adoption.HiveConversion, model_name: str
    ) -> None:
        """The Hive table's rows rewritten as the run's format under a new location, the
        Hive table kept under another name with all its files (hive_adoption.py)."""
        logger.info(
            f"mutable_table '{model_name}': {conversion.relation} is a Hive-format table; "
            f"its rows are rewritten once as {conversion.file_format} at "
            f"{conversion.location}, and the Hive table is kept as "
            f"{hive_adoption.kept_name(conversion.relation)}"
        )
        hive_adoption.convert(
            conversion,
            self._table_listed,  # type: ignore[attr-defined]
            self._table_properties_of,
            self._execute_trusted,
        )

    def _table_properties_of(self, relation: str) -> dict[str, str]:
        """A table's properties (``show tblproperties``)."""
        return {str(r[0]): str(r[1]) for r in self._run_sql(f"show tblproperties {relation}")}

    @available
    def mutable_stage_change_set(
        self,
        staging: Any,
        change_set_sql: str,
        replace: bool = False,
        count: bool = False,
        leftovers_of: Optional[Mapping[str, Any]] = None,
    ) -> dict[str, Any]:
        """The plan's change set where its applier reads it: ``{rejected, counts}``.

        A MERGE's (``staging`` a view) is a temp view, evaluated inside the MERGE's own
        transaction. A rewrite's is materialized once as the run's staging table,
        stamped with its owner (commit/ownership.py: only a run that is provably gone has
        its staging table removed by another; ``replace``: an earlier attempt of this
        run made one). ``rejected``: the batch check that stopped the staging
        (``checks_in_plan``): nothing was created, and the empty directory Spark's
        failed write leaves is removed where the adapter reaches the file system.
        ``leftovers_of`` (``target``, ``location``, ``run_id``): then the staging tables
        and claims of runs that are provably gone are dropped. ``counts`` (when
        ``count``): what the change set inserts, updates and deletes."""
        if getattr(staging, "type", None) == "view":
            self._execute_trusted(
                f"create or replace temporary view {staging} as\n  {change_set_sql}"
            )
        else:
            if replace:
                self._execute_trusted(f"drop table if exists {staging}")
            properties = self.mutable_holder_properties()
            rejected = self.mutable_run_checked(
                version_commit.staging_table_sql(str(staging), change_set_sql, properties)
            )
            if rejected:
                described = self._run_sql(f"describe schema extended {staging.schema}")
                schema_location = str(table_properties.describe_location(described))
                self.mutable_remove_empty_dir(
                    f"{schema_location}/{str(staging.identifier).lower()}"
                )
                return {"rejected": rejected, "counts": None}
        if leftovers_of is not None:
            self.mutable_drop_abandoned_leftovers(
                leftovers_of["target"], leftovers_of.get("location"), str(leftovers_of["run_id"])
            )
        counts = self.mutable_change_counts(staging) if count else None
        return {"rejected": None, "counts": counts}

    @available
    def mutable_drop_table(self, relation: Any, state: Mapping[str, Any]) -> str:
        """A permitted rebuild's drop: the table, Delta's tombstone table beside it
        (parquet/orc keep theirs in the version directories), and the rewrite formats'
        version directories (the table's whole base)."""
        self._run_sql(f"drop table if exists {relation}")
        self._run_sql(f"drop table if exists {self._tombstone_relation(relation)}")
        location = state.get("location")
        if location:
            base = str(location).rstrip("/").rsplit("/", 1)[0]
            self.mutable_remove_paths(relation, [base], version_locations.new_run_id())
        return ""

    def _commit_create(
        self,
        definition: dict[str, Any],
        target: Any,
        change_set: Any,
        first_state_sql: str,
        file_format: str,
        run_id: str,
        fail_at: Optional[str],
        cleanup: Sequence[str],
        counts: Any,
        registry_schema: Optional[str],
        invocation_id: str,
    ) -> Optional[str]:
        """A first run's (or a permitted rebuild's) create, all or nothing
        (version_commit.create_steps): the registry first (shared, created if missing),
        then the table with its rows and its registry row; the rewrite formats' first
        version directory is kept with the versions beyond ``versions_kept`` swept.
        Returns that directory (None for Delta and Iceberg)."""
        records = self.mutable_table_records(
            definition, target, file_format, registry_schema, invocation_id
        )
        self.mutable_execute_all_or_nothing(
            [{"sql": records["create_registry"], "tolerate_exists": True}]
        )
        location = None
        if file_format in MERGE_FORMATS:
            self.mutable_tag_delta_commits()
        else:
            described = self._run_sql(f"describe schema extended {target.schema}")
            schema_location = str(table_properties.describe_location(described))
            location = version_locations.version_dir(
                f"{schema_location.rstrip('/')}/{target.identifier}", 1, run_id
            )
        steps = version_commit.create_steps(
            self,
            definition,
            target,
            change_set,
            first_state_sql,
            file_format,
            location,
            records,
            fail_at,
            counts,
            invocation_id,
        )
        self.mutable_execute_all_or_nothing(steps, cleanup)
        if location:
            self.mutable_sweep_versions(
                target, location, definition.get("versions_kept"), True, run_id
            )
        return location

    def mutable_commit_rewrite(
        self,
        definition: dict[str, Any],
        target: Any,
        change_set: Any,
        next_state_sql: str,
        file_format: str,
        planned_location: str,
        run_id: str,
        fail_at: Optional[str],
        cleanup: Sequence[str],
        last_attempt: bool,
        counts: Any,
        invocation_id: str,
        kind: str = "run",
        tombstones_sql: Optional[str] = None,
    ) -> Optional[str]:
        """The next version of an existing parquet/orc table (version_commit.commit_rewrite),
        written beside ``planned_location`` (the version the plan was made from) and
        swapped in by compare-and-swap. Returns the committed directory, or None when a
        concurrent run committed first and ``last_attempt`` is false (the caller
        re-plans)."""
        return version_commit.commit_rewrite(
            self,
            self._run_sql,
            definition,
            target,
            change_set,
            next_state_sql,
            file_format,
            planned_location,
            version_locations.next_location(planned_location, run_id),
            fail_at,
            cleanup,
            last_attempt,
            counts,
            invocation_id,
            kind,
            tombstones_sql,
        )

    @available
    def mutable_rollback_merge(
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
        self.changelog_repair(definition, relation, state)
        if file_format == "iceberg" and definition.get("changelog_topic"):
            counts = self._rollback_merge_logged(definition, relation, plan, model_name)
        else:
            counts = self.mutable_commit_merge(plan["merge_sql"], model_name, True)["counts"]
        self.mutable_tombstones_rollback(
            definition, relation, file_format, plan["history"], plan["version"]
        )
        if definition.get("changelog_topic"):
            self.changelog_publish(definition, relation, None)
        if file_format == "iceberg" and expire_snapshots:
            self.mutable_expire_iceberg_snapshots(
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
        self._execute_trusted(
            f"create or replace temporary view {change_set} as\n{plan['change_set_sql']}"
        )
        try:
            changes = self.mutable_change_counts(change_set)
            if changes["total"] == 0:
                merged = self.mutable_commit_merge(plan["merge_sql"], model, True)
            else:
                records = self.mutable_branch_records(
                    definition, relation, change_set, None, changes["total"]
                )
                merged = self.mutable_commit_merge_on_branch(
                    plan["merge_sql"], relation, model, True, records
                )
        finally:
            self._execute_trusted(f"drop view if exists {change_set}")
        return merged["counts"]
