"""The mutable_table methods the Jinja materialization calls (``adapter.mutable_*``).

Kept out of impl.py: JammiAdapter mixes this in. Every method delegates to
``mutable.py`` (decisions) or ``storage.py`` (version directories).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi import commit_claim, leftovers, merge_commit, mutable, ownership, storage
from dbt.adapters.jammi.definition_change import check_definition_change
from dbt.adapters.jammi.statements import StatementsMixin
from dbt.adapters.jammi.validation import sql_string_literal

# A shared relation's create racing another run's create of it: tries in all.
CREATE_RACE_ATTEMPTS = 4

logger = AdapterLogger("Jammi")

# A rewrite run that loses its commit to a concurrent run re-plans this many times in all.
COMMIT_ATTEMPTS = 3
RETRY_PAUSE_S = 0.5


def _rows(table: Any) -> list[list[Any]]:
    return [list(row) for row in getattr(table, "rows", table) or []]


class MutableTableAdapterMixin(StatementsMixin):
    """``adapter.mutable_*`` methods; mixed into JammiAdapter."""

    config: Any
    cache: Any  # dbt's relation cache (BaseAdapter)

    # --- definition after a schema change -------------------------------------

    @available
    def mutable_reconcile_schema(
        self,
        model_name: str,
        batch_definition: Mapping[str, Any],
        stored_columns: Sequence[Any],
        stored_definition: Optional[Mapping[str, Any]] = None,
        stored_file_format: Optional[str] = None,
        requested_file_format: Optional[str] = None,
    ) -> dict[str, Any]:
        """How the batch applies to the existing table; raises, before anything is
        written, if the definition changes what the stored rows were written under
        (primary key, history, file format) or the schema changes in a way the options
        do not allow."""
        pairs = []
        for column in stored_columns:
            if isinstance(column, (list, tuple)):
                pairs.append([str(column[0]), str(column[1])])
            else:
                pairs.append([column.name, column.data_type])
        check_definition_change(
            model_name,
            stored_definition,
            batch_definition,
            [name for name, _ in pairs],
            stored_file_format,
            requested_file_format,
        )
        result = mutable.reconcile_schema(model_name, batch_definition, pairs)
        return {
            "definition": result.definition,
            "new_columns": result.new_columns,
            "missing_columns": result.missing_columns,
        }

    @available
    def mutable_query_columns(self, describe_rows: Any) -> list[list[str]]:
        """(name, type) pairs from ``DESCRIBE QUERY`` rows (col_name, data_type, comment)."""
        return mutable.query_columns(_rows(describe_rows))

    @available
    def mutable_definition_json(self, definition: Mapping[str, Any]) -> str:
        """The definition as recorded on the table and in the registry (without the
        per-run ``batch_columns``)."""
        recorded = {k: v for k, v in definition.items() if k not in mutable.RUN_ONLY_KEYS}
        return json.dumps(recorded, sort_keys=True, separators=(",", ":"))

    @available
    def mutable_definition_property(self, definition: Mapping[str, Any]) -> str:
        """The ``jammi.definition`` table property: the recorded JSON, hex-encoded so
        that Spark's property redaction cannot hide it."""
        return mutable.encode_definition(self.mutable_definition_json(definition))

    @available
    def mutable_stored_definition(self, properties: Mapping[str, Any]) -> Optional[dict[str, Any]]:
        return mutable.stored_definition(properties)

    @available
    def mutable_parse_definition(self, text: Any) -> Optional[dict[str, Any]]:
        """A definition recorded in the registry (plain JSON)."""
        return mutable.parse_definition(text)

    # --- run options -------------------------------------------------------------

    @available
    def mutable_full_refresh_allowed(self, flag: Any, config_value: Any) -> bool:
        return mutable.full_refresh_allowed(flag, config_value)

    @available
    def mutable_definition_config(self, model: Mapping[str, Any]) -> dict[str, Any]:
        """model.config without the dbt defaults a mutable table does not share."""
        return mutable.definition_config(
            model.get("config") or {}, model.get("unrendered_config") or {}
        )

    @available
    def mutable_requested_file_format(self, model: Mapping[str, Any]) -> str:
        config = model.get("config") or {}
        return mutable.requested_file_format(
            model.get("unrendered_config") or {}, config.get("file_format")
        )

    @available
    def mutable_failure_phase(self, value: Any) -> Optional[str]:
        """The phase a test asked to fail at (var 'jammi_fail_at'), validated."""
        if value in (None, ""):
            return None
        if value not in mutable.FAILURE_PHASES:
            raise mutable.MutableRunError(
                f"var jammi_fail_at={value!r} is not one of {', '.join(mutable.FAILURE_PHASES)}"
            )
        return str(value)

    # --- locations and versions --------------------------------------------------

    @available
    def mutable_run_id(self) -> str:
        return mutable.new_run_id()

    @available
    def mutable_location(self, describe_rows: Any) -> Optional[str]:
        return mutable.describe_location(_rows(describe_rows))

    @available
    def mutable_describe_properties(self, describe_rows: Any) -> dict[str, str]:
        return mutable.describe_properties(_rows(describe_rows))

    @available
    def mutable_first_location(self, schema_location: str, identifier: str, run_id: str) -> str:
        return mutable.version_dir(f"{schema_location.rstrip('/')}/{identifier}", 1, run_id)

    @available
    def mutable_next_location(self, current_location: str, run_id: str) -> str:
        return mutable.next_location(current_location, run_id)

    @available
    def mutable_version(self, location: Optional[str]) -> Optional[int]:
        return mutable.parse_version(location) if location else None

    @available
    def mutable_base_location(self, location: str) -> str:
        return location.rstrip("/").rsplit("/", 1)[0]

    # --- file system (embedded session only) ------------------------------------

    def _has_local_filesystem(self) -> bool:
        return bool(getattr(self.config.credentials, "is_session", False))

    @available
    def mutable_remove_stale_versions(
        self, current_location: str, keep_newer: bool = True
    ) -> list[str]:
        """Remove version directories no commit points at; returns what was removed."""
        base = current_location.rstrip("/").rsplit("/", 1)[0]
        if not self._has_local_filesystem():
            logger.info(
                f"mutable_table: skipping cleanup of {base} (no file system access over "
                "this connection method; remove old version directories with your "
                "storage tooling)"
            )
            return []
        stale = mutable.stale_version_dirs(
            storage.list_children(base), current_location, keep_newer
        )
        for path in stale:
            storage.remove(path)
            logger.debug(f"mutable_table: removed stale version directory {path}")
        return stale

    @available
    def mutable_remove_path(self, path: str) -> bool:
        if not self._has_local_filesystem():
            return False
        return storage.remove(path)

    @available
    def mutable_remove_empty_dir(self, path: str) -> bool:
        """Remove a directory that holds nothing (what a failed CTAS leaves)."""
        return self._has_local_filesystem() and storage.remove_if_empty(path)

    @available
    def mutable_list_versions(self, base: str) -> list[str]:
        if not self._has_local_filesystem():
            return []
        return sorted(storage.list_children(base))

    # --- errors --------------------------------------------------------------------

    @available
    def mutable_batch_error(self, model_name: str, kind: str, table: Any, detail: str = "") -> None:
        columns = list(getattr(table, "column_names", []) or [])
        mutable.batch_error(model_name, kind, _rows(table), columns, detail)

    # --- all-or-nothing registration ----------------------------------------------

    @available
    def mutable_execute_all_or_nothing(
        self, steps: Sequence[Mapping[str, Any]], cleanup: Sequence[str] = ()
    ) -> None:
        """Run each step's ``sql`` in order. If one fails, undo only what this run did:
        in reverse order, each *completed* step's ``undo_sql`` (so a ``CREATE TABLE``
        that failed because the table exists never leads to dropping that table), and
        each *started* step's ``undo_paths`` (directories named after this run, which a
        failed write may have filled partly); then every ``cleanup`` statement (this
        run's own relations), then re-raise. A step with ``creates`` names the relation
        it creates: if another run created it first, the error says so."""
        execute = self.execute  # type: ignore[attr-defined]  # SQLAdapter.execute
        started: list[Mapping[str, Any]] = []
        try:
            for step in steps:
                started.append(step)
                if step.get("tolerate_exists"):
                    self._create_if_not_exists(step["sql"])
                else:
                    execute(step["sql"], fetch=True)
        except BaseException as exc:
            failed = started[-1] if started else {}
            for step in reversed(started):
                undo_sql = step.get("undo_sql") if step is not failed else None
                for undo in [undo_sql] if undo_sql else []:
                    self._best_effort(lambda sql=undo: execute(sql))
                for path in step.get("undo_paths") or ():
                    self._best_effort(lambda p=path: self._remove_if_ours(p))
            self._run_cleanup(cleanup)
            created = failed.get("creates")
            if created:
                reason = merge_commit.lost_create_message(
                    str(created), str(exc), lambda: self._table_listed(str(created))
                )
                if reason:
                    raise mutable.MutableRunError(reason) from exc
            raise

    def _table_listed(self, relation: str) -> bool:
        schema, _, identifier = relation.rpartition(".")
        found = self._run_sql(f"show tables in {schema} like {sql_string_literal(identifier)}")
        return any(str(row[1]).lower() == identifier.lower() for row in found if len(row) > 1)

    def _create_if_not_exists(self, sql: str) -> None:
        """A ``create ... if not exists`` of a relation runs share (the registry), racing
        another run's create of it: Spark may still report that it exists, and Delta
        refuses the second of two concurrent creates (a conflict on the new log's first
        commit, or the other run's files already at the location) -- then the other
        run's create is finishing, and the statement is repeated until it is a no-op."""
        for attempt in range(CREATE_RACE_ATTEMPTS):
            try:
                self.execute(sql, fetch=True)  # type: ignore[attr-defined]
                return
            except Exception as exc:
                message = str(exc)
                if commit_claim.already_exists(message):
                    return
                racing = merge_commit.is_delta_conflict(message)
                if not (racing or merge_commit.NON_EMPTY_LOCATION in message):
                    raise
                if attempt == CREATE_RACE_ATTEMPTS - 1:
                    raise
                time.sleep(0.5 * (attempt + 1))

    @staticmethod
    def _best_effort(action: Any) -> None:
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - keep undoing
            logger.warning(f"mutable_table: undo step failed: {exc}")

    def _remove_if_ours(self, path: str) -> None:
        """Remove a version directory; a base directory only when empty (``path`` ending
        in ``/`` means: the directory, if nothing is left in it)."""
        if path.endswith("/"):
            if self._has_local_filesystem():
                storage.remove_if_empty(path.rstrip("/"))
        else:
            self.mutable_remove_path(path)

    # --- commit protocol and leftovers (rewrite formats) ------------------------

    def _holder(self) -> ownership.Holder:
        method = getattr(self.config.credentials, "method", "")
        return ownership.this_holder(str(getattr(method, "value", method)))

    @available
    def mutable_holder_properties(self) -> dict[str, str]:
        """Properties that stamp a run's staging table with its owner (``ownership``)."""
        return ownership.holder_properties(self._holder(), commit_claim.now_ms())

    @available
    def mutable_commit_attempts(self) -> int:
        return COMMIT_ATTEMPTS

    @available
    def mutable_commit_merge(
        self, merge_sql: str, model_name: str, last_attempt: bool
    ) -> dict[str, Any]:
        """The MERGE applier's commit (``merge_commit``): ``committed`` False when Delta
        refused it for a concurrent commit and the run re-plans, or when a batch check
        stopped a batch-sourced MERGE (``rejected``: the check's kind; the caller reads
        the check's samples and fails); ``counts`` what the committed MERGE changed."""
        try:
            rows = merge_commit.commit_merge(self._run_sql, merge_sql, model_name, last_attempt)
        except merge_commit.BatchRejected as rejected:
            return {"committed": False, "counts": None, "rejected": rejected.kind}
        if rows is None:
            return {"committed": False, "counts": None}
        return {"committed": True, "counts": merge_commit.merge_counts(rows)}

    @available
    def mutable_merges_batch(self, file_format: str, definition: dict[str, Any]) -> bool:
        """Whether an existing table's run MERGEs the batch itself, its checks and the
        planner's rules in the MERGE (merge_batch.sql; Delta returns the counts)."""
        return file_format == "delta" and merge_commit.merges_batch(definition)

    @available
    def mutable_counts_from_merge(self, file_format: str, definition: dict[str, Any]) -> bool:
        """Whether an existing table's run takes its counts from the MERGE's own result
        (Delta returns them) instead of counting the change set first: the change set is
        then evaluated once, inside the MERGE. Unique indexes still need the change set
        checked before the MERGE, so they keep the count."""
        has_unique_index = any(index.get("unique") for index in definition.get("indexes") or [])
        return file_format == "delta" and not has_unique_index

    @available
    def mutable_plans_checked_batch(self, file_format: str, definition: dict[str, Any]) -> bool:
        """Whether a rewrite-format run can check the batch inside the statement that
        stages its change set (``merge_commit.plans_checked_batch``)."""
        return file_format not in merge_commit.MERGE_FORMATS and merge_commit.plans_checked_batch(
            definition
        )

    @available
    def mutable_run_checked(self, sql: str) -> Optional[str]:
        """Run a statement that checks the batch on its way in (checks.sql,
        mutable_checked_batch_sql): None when it ran, else the kind of the batch check
        that stopped it (nothing was written). Any other error is raised."""
        try:
            self._run_sql(sql)
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            kind = merge_commit.failed_batch_check(str(exc))
            if kind is None:
                raise
            return kind
        return None

    @available
    def mutable_batch_check_marker(self, kind: str) -> str:
        return merge_commit.batch_check_marker(kind)

    @available
    def mutable_change_counts(self, insert: int, update: int, delete: int) -> dict[str, Any]:
        return merge_commit.change_counts(int(insert), int(update), int(delete))

    @available
    def mutable_commit_version(
        self,
        target_relation: Any,
        planned_location: str,
        new_location: str,
        model_name: str,
        cleanup: Sequence[str] = (),
        last_attempt: bool = True,
        staged_paths: Sequence[str] = (),
    ) -> bool:
        """The compare-and-swap commit of a written version (``commit_claim``). True when
        it committed. When it lost to a concurrent run, this run's version directory (and
        ``staged_paths``, what it staged for the version: its changelog events) is
        removed and, unless this was the last attempt, False is returned after a short
        pause (the caller re-plans against the winner's version); on the last attempt, or
        on any other failure, ``cleanup`` (this run's own relations) runs too and the
        error is raised."""
        try:
            commit_claim.commit_version(
                self._run_sql,
                model_name=model_name,
                schema=str(target_relation.schema),
                identifier=str(target_relation.identifier),
                planned_location=planned_location,
                new_location=new_location,
                holder=self._holder(),
            )
            return True
        except commit_claim.CommitConflict as exc:
            for path in (new_location, *staged_paths):
                self._best_effort(lambda path=path: self.mutable_remove_path(path))
            if not last_attempt:
                logger.info(f"mutable_table '{model_name}': re-planning ({exc})")
                time.sleep(RETRY_PAUSE_S)
                return False
            self._run_cleanup(cleanup)
            raise
        except BaseException:
            for path in (new_location, *staged_paths):
                self._best_effort(lambda path=path: self.mutable_remove_path(path))
            self._run_cleanup(cleanup)
            raise

    def _run_cleanup(self, cleanup: Sequence[str]) -> None:
        for sql in cleanup:
            self._best_effort(lambda s=sql: self.execute(s))  # type: ignore[attr-defined]

    def _may_hold_leftovers(self, relation: Any) -> bool:
        """False when dbt's relation cache listed the table's schema at the start of this
        invocation and found no run relation of the table there: what earlier runs left
        behind would have been listed, so the run skips its own listing (one statement).
        What runs still going now leave is swept by a later invocation."""
        database, schema = relation.database, relation.schema
        if (database, schema) not in self.cache:
            return True
        identifier = str(relation.identifier)
        return any(
            leftovers.is_leftover(identifier, str(cached.identifier))
            for cached in self.cache.get_relations(database, schema)
        )

    @available
    def mutable_drop_abandoned_leftovers(
        self, target_relation: Any, current_location: Optional[str], run_id: str
    ) -> list[str]:
        """Drop staging tables whose runs are provably gone and claims the table has
        passed (``leftovers``); returns what was dropped."""
        schema, identifier = str(target_relation.schema), str(target_relation.identifier)
        if not self._may_hold_leftovers(target_relation):
            return []
        pattern = sql_string_literal(leftovers.leftover_pattern(identifier))
        names = [
            str(row[1])
            for row in self._run_sql(f"show tables in {schema} like {pattern}")
            if len(row) > 2 and not row[2]
        ]
        version = mutable.parse_version(current_location) if current_location else None
        dropped = []
        for name in leftovers.stale_claims(identifier, names, version):
            self._run_sql(f"drop view if exists {schema}.{name}")
            dropped.append(name)
        now = commit_claim.now_ms()
        for name in leftovers.foreign_staging(identifier, names, run_id):
            try:
                rows = self._run_sql(f"show tblproperties {schema}.{name}")
            except Exception as exc:  # noqa: BLE001 - dropped by its owner meanwhile
                if commit_claim.not_found(str(exc)):
                    continue
                raise
            properties = {str(r[0]): str(r[1]) for r in rows if len(r) >= 2}
            if ownership.abandoned(properties, now, leftovers.STAGING_MAX_AGE_MS):
                self._run_sql(f"drop table if exists {schema}.{name}")
                dropped.append(name)
        for name in dropped:
            logger.debug(f"mutable_table: dropped abandoned {schema}.{name}")
        return dropped
