"""The commits of a mutable_table run, one call each (the face's, impl.py, and the
run's, run_service.py): an attempt's commit phase (``adapter.mutable_commit``: a first run's
create, a MERGE, or the rewrite formats' next version; commit/version_commit.py holds
the create's and the rewrite's protocols); and what it builds on: the rewrite applier's
staged change set (``adapter.mutable_stage_change_set``) and a permitted rebuild's drop
(``adapter.mutable_drop_table``). Each draws on the services it is given: the
commit paths (commit/commit_service.py), the rules' records (rules/rules_service.py:
identity, tombstones, changelog), the all-or-nothing steps (steps.py), the stored table
(table_state.py) and the kept versions (versions/versions_service.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.mutable_table import (
    hive_adoption,
    run_errors,
    table_properties,
    version_locations,
)
from dbt.adapters.jammi.mutable_table.commit import version_commit
from dbt.adapters.jammi.mutable_table.commit.attempt import Attempt, AttemptOutcome, TableWrite
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from dbt.adapters.jammi.mutable_table.steps import StepRunner
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.table_state import TableStateService
from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService

logger = AdapterLogger("Jammi")


class MutableApplyService:
    """The commits of a mutable_table run: ``commit``, ``adopt``,
    ``stage_change_set``, ``drop_table`` (the face's ``mutable_*``, impl.py)."""

    def __init__(
        self,
        sql: SqlSession,
        rules: RulesService,
        commits: CommitService,
        steps: StepRunner,
        tables: TableStateService,
        versions: VersionsService,
    ) -> None:
        self._sql = sql
        self._rules = rules
        self._commits = commits
        self._steps = steps
        self._tables = tables
        self._versions = versions
        # what the create's and the rewrite's protocols use (commit/version_commit.py)
        self._parts = version_commit.CommitParts(versions, rules, steps, commits)

    def _commit_merge(self, write: TableWrite, attempt: Attempt) -> dict[str, Any]:
        """The MERGE applier's commit: ``{committed, counts}`` (``rejected``: the batch
        check that stopped a batch-sourced MERGE; ``committed`` False when a concurrent
        run committed first and the run re-plans). The test hook's stop before it; then
        on Iceberg, a batch-sourced MERGE (no change set) counted from its own
        snapshot, or a change set's MERGE through the run's branch when appends must
        commit with it (the plan's tombstones, the identity column's mark, the changelog's
        records: a ``Transaction``, commit/transaction.py); else one MERGE, Delta's commit recording
        where identity numbering started."""
        if attempt.fail_at in ("write", "before_commit"):
            self._sql.rows(run_errors.failure_sql(attempt.fail_at))
        merge_sql, target, model_name = write.statement, write.target, write.model_name
        on_branch = table_format(write.file_format).merges_on_branch
        if on_branch and attempt.change_set is None:
            return self._commits.commit_merge(
                merge_sql, model_name, attempt.last_attempt, None, target
            )
        if on_branch:
            records = Transaction()
            self._rules.add_branch_records(records, write, attempt)
            if records:
                return self._commits.commit_merge_on_branch(
                    merge_sql, target, model_name, attempt.last_attempt, records
                )
        return self._commits.commit_merge(
            merge_sql, model_name, attempt.last_attempt, write.definition.get("identity_from")
        )

    def commit(
        self,
        kind: str,
        definition: Mapping[str, Any],
        target: Any,
        file_format: str,
        statement: str,
        attempt: Mapping[str, Any],
        **kind_values: Any,
    ) -> AttemptOutcome:
        """An attempt's commit phase, all or nothing: its outcome (``counts``: the staged
        change set's, else what the MERGE reports).
        ``kind``: ``create`` (a first run or a permitted rebuild; its
        ``statement`` the table's first rows, ``location`` the rewrite formats' first
        version directory), ``merge`` (the MERGE formats; ``statement`` the MERGE;
        ``rejected`` the batch check that stopped a batch-sourced one) or ``rewrite``
        (parquet/orc; ``statement`` the next version's rows, ``location`` the committed
        directory). ``committed`` is False when a concurrent run committed first and
        the attempt is not the last: the run re-plans. ``attempt``: the attempt's values
        (commit/attempt.py, ``Attempt``), and ``kind_values`` those only this kind of
        commit reads (``registry_schema``, ``tombstone_insert``, ``planned_location``,
        ``tombstones_sql``)."""
        write = TableWrite(definition, target, file_format, statement)
        values = Attempt.from_mapping({**attempt, **kind_values})
        if kind == "merge":
            merged = self._commit_merge(write, values)
            return AttemptOutcome(
                committed=bool(merged["committed"]),
                counts=merged["counts"] if values.counts is None else values.counts,
                rejected=merged.get("rejected"),
            )
        if kind == "create":
            location = self._commit_create(write, values)
            return AttemptOutcome(committed=True, counts=values.counts, location=location)
        if kind != "rewrite":
            raise ValueError(f"a commit is a create, a merge or a rewrite, not {kind!r}")
        location = self.commit_rewrite(write, values)
        return AttemptOutcome(
            committed=location is not None, counts=values.counts, location=location
        )

    def outcome(
        self,
        committed: bool,
        counts: Optional[Mapping[str, Any]] = None,
        rejected: Optional[str] = None,
    ) -> AttemptOutcome:
        """An attempt's outcome that no commit gave: not yet tried (``committed``
        False), nothing to commit (True, with the staged ``counts``), or the batch check
        that stopped the staging (``rejected``)."""
        return AttemptOutcome(committed=bool(committed), counts=counts, rejected=rejected)

    def adopt(
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
        rows = self._sql.rows(f"select count(*) from {target}")[0][0]
        logger.info(
            f"mutable_table '{model_name}': adopting {target} (built by another "
            f"materialization) with its {rows} stored row(s); they are kept as shared rows "
            "(tenant_id NULL)"
        )
        records = self._tables.table_records(
            definition, target, str(state["file_format"]), registry_schema, invocation_id
        )
        self._steps.all_or_nothing([{"sql": records["create_registry"], "tolerate_exists": True}])
        if (state.get("adoption_plan") or {}).get("add_tenant_column"):
            self._sql.rows(f"alter table {target} add columns (`tenant_id` string)")
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
            self._sql.table_listed,
            self._sql.table_properties,
            self._sql.trusted,
        )

    def stage_change_set(
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
            self._sql.trusted(f"create or replace temporary view {staging} as\n  {change_set_sql}")
        else:
            if replace:
                self._sql.trusted(f"drop table if exists {staging}")
            properties = self._commits.holder_properties()
            rejected = self._commits.run_checked(
                version_commit.staging_table_sql(str(staging), change_set_sql, properties)
            )
            if rejected:
                described = self._sql.rows(f"describe schema extended {staging.schema}")
                schema_location = str(table_properties.describe_location(described))
                self._steps.remove_empty_dir(f"{schema_location}/{str(staging.identifier).lower()}")
                return {"rejected": rejected, "counts": None}
        if leftovers_of is not None:
            self._commits.drop_abandoned_leftovers(
                leftovers_of["target"], leftovers_of.get("location"), str(leftovers_of["run_id"])
            )
        counts = self._commits.change_counts(staging) if count else None
        return {"rejected": None, "counts": counts}

    def drop_table(self, relation: Any, state: Mapping[str, Any]) -> str:
        """A permitted rebuild's drop: the table, Delta's tombstone table beside it
        (parquet/orc keep theirs in the version directories), and the rewrite formats'
        version directories (the table's whole base)."""
        self._sql.rows(f"drop table if exists {relation}")
        self._sql.rows(f"drop table if exists {self._rules.tombstone_relation(relation)}")
        location = state.get("location")
        if location:
            base = str(location).rstrip("/").rsplit("/", 1)[0]
            self._versions.remove_paths(relation, [base], version_locations.new_run_id())
        return ""

    def _commit_create(self, write: TableWrite, attempt: Attempt) -> Optional[str]:
        """A first run's (or a permitted rebuild's) create, all or nothing
        (version_commit.create_steps): the registry first (shared, created if missing),
        then the table with its rows and its registry row; the rewrite formats' first
        version directory is kept with the versions beyond ``versions_kept`` swept.
        Returns that directory (None for Delta and Iceberg)."""
        target = write.target
        records = self._tables.table_records(
            write.definition,
            target,
            write.file_format,
            attempt.registry_schema,
            attempt.invocation_id,
        )
        self._steps.all_or_nothing([{"sql": records["create_registry"], "tolerate_exists": True}])
        location = None
        if table_format(write.file_format).applies_by_merge:
            self._versions.tag_delta_commits()
        else:
            described = self._sql.rows(f"describe schema extended {target.schema}")
            schema_location = str(table_properties.describe_location(described))
            location = version_locations.version_dir(
                f"{schema_location.rstrip('/')}/{target.identifier}", 1, attempt.run_id
            )
        steps = version_commit.create_steps(self._parts, write, attempt, location, records)
        self._steps.all_or_nothing(steps, attempt.cleanup)
        if location:
            self._versions.sweep(
                target, location, write.definition.get("versions_kept"), True, attempt.run_id
            )
        return location

    def commit_rewrite(self, write: TableWrite, attempt: Attempt) -> Optional[str]:
        """The next version of an existing parquet/orc table (version_commit.commit_rewrite),
        written beside ``attempt.planned_location`` (the version the plan was made from)
        and swapped in by compare-and-swap. Returns the committed directory, or None when
        a concurrent run committed first and the attempt is not the last (the caller
        re-plans)."""
        planned = str(attempt.planned_location)
        return version_commit.commit_rewrite(
            self._parts,
            self._sql.rows,
            write,
            attempt,
            version_locations.next_location(planned, attempt.run_id),
        )
