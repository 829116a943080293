"""Kept versions, reads of the past and rollback, as a service: the face's
``adapter.mutable_history``, ``mutable_as_of`` and ``mutable_rollback_plan`` (impl.py) hand
their calls here, and the commits use its version log, sweep and removals
(``versions/kept_versions.py`` and ``versions/version_reads.py`` decide; docs/versions.md).

Removing a version directory needs no file system client: where the adapter has none
(thrift, http, odbc) the server's metastore removes it. A *managed* helper table
``<table>__jammi_remover_<run id>`` is created, pointed at the directory with ``ALTER
TABLE ... SET LOCATION`` and dropped: dropping a managed table deletes the directory it
points at. Created again (its own empty default directory, which it reuses) and dropped,
it leaves nothing behind. A metastore that refuses this gets the directory overwritten
with an empty result (``INSERT OVERWRITE DIRECTORY``): a few hundred bytes instead of a
copy of the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.invocation import get_invocation_id

from dbt.adapters.jammi.common import clock
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.mutable_table import format_reads as format_reads_module
from dbt.adapters.jammi.mutable_table import version_locations
from dbt.adapters.jammi.mutable_table.commit import ownership
from dbt.adapters.jammi.mutable_table.format_reads import format_reads
from dbt.adapters.jammi.mutable_table.rules import identity
from dbt.adapters.jammi.mutable_table.run_definition import RunDefinition
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.versions import (
    iceberg_expiry,
    kept_version_phases,
    kept_versions,
    version_reads,
)

logger = AdapterLogger("Jammi")

REMOVER_MARKER = "__jammi_remover_"
DELTA_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


class VersionsService:
    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql

    def _version_holder(self) -> str:
        method = getattr(self.sql.credentials, "method", "")
        return ownership.this_holder(str(getattr(method, "value", method))).render()

    def version_log_sql(
        self,
        location: str,
        parent: Optional[str],
        counts: Optional[Mapping[str, Any]],
        invocation_id: str,
        kind: str = "run",
    ) -> str:
        return kept_versions.write_log_sql(
            location,
            parent,
            clock.now_ms(),
            counts or {},
            str(invocation_id or ""),
            kind,
            self._version_holder(),
        )

    def version_log_location(self, location: str) -> str:
        return kept_versions.log_location(location)

    def sweep(
        self,
        target_relation: Any,
        current_location: str,
        versions_kept: Optional[int],
        committed_now: bool,
        run_id: str,
    ) -> list[str]:
        """Remove versions beyond the kept ones and abandoned leftovers of other runs
        (``kept_versions.plan_removal``); returns what was removed. ``versions_kept`` None:
        the default (a definition recorded on the table carries no run options)."""
        if versions_kept is None:
            versions_kept = kept_versions.DEFAULT_VERSIONS_KEPT
        base = current_location.rstrip("/").rsplit("/", 1)[0]
        records = format_reads_module.version_records(self.sql.rows, current_location)
        listed = storage.list_children(base) if self.sql.local_filesystem else None
        remove = kept_versions.plan_removal(
            current_location, versions_kept, records, listed, committed_now, clock.now_ms()
        )
        if remove:
            self._remove_paths(target_relation, remove, run_id)
        for path in remove:
            logger.debug(f"mutable_table: removed {path}")
        return remove

    def _remove_paths(self, target_relation: Any, paths: Sequence[str], run_id: str) -> None:
        if self.sql.local_filesystem:
            for path in paths:
                storage.remove(path)
            return
        self._remove_paths_by_sql(
            str(target_relation.schema), str(target_relation.identifier), paths, run_id
        )

    def _remove_paths_by_sql(
        self, schema: str, identifier: str, paths: Sequence[str], run_id: str
    ) -> None:
        """Remove directories through the server's metastore (module docstring)."""
        helper = f"{schema}.{identifier}{REMOVER_MARKER}{run_id}"
        create = f"create table {helper} (removed int) using parquet"
        self.sql.rows(f"drop table if exists {helper}")
        self.sql.rows(create)
        try:
            for path in paths:
                try:
                    self.sql.rows(f"alter table {helper} set location {sql_string_literal(path)}")
                    self.sql.rows(f"drop table {helper}")
                except Exception as exc:  # noqa: BLE001 - a metastore that refuses
                    logger.info(f"mutable_table: emptying {path} instead of removing it ({exc})")
                    self.sql.rows(
                        f"insert overwrite directory {sql_string_literal(path)} using parquet "
                        "select 1 as removed where false"
                    )
                    self.sql.rows(f"drop table if exists {helper}")
                self.sql.rows(create)
        finally:
            self.sql.rows(f"drop table if exists {helper}")

    def remove_paths(self, target_relation: Any, paths: Sequence[str], run_id: str) -> None:
        """Remove directories on every connection method (this run's own, or a whole
        table's base after a permitted rebuild)."""
        self._remove_paths(target_relation, [p for p in paths if p], run_id)

    # --- reads of the past and rollback (versions/version_reads.py) ---------------------

    def tag_delta_commits(self, identity_from: Any = None) -> str:
        """Tag this connection's Delta commits with the dbt invocation id (Delta's
        ``commitInfo.userMetadata``), which ``mutable_table_history`` shows. Every
        thread of one dbt process has the same invocation id, so the value is never
        wrong for a concurrent thread; it is not a setting dbt-spark's macros use.
        ``identity_from``: the next MERGE's numbering start (rules/identity.py); the
        caller tags again without it right after that MERGE."""
        tag = identity.commit_metadata(
            version_reads.INVOCATION_PREFIX + str(get_invocation_id()), identity_from
        )
        self.sql.rows(f"set {DELTA_USER_METADATA}={tag}")
        return ""

    def expire_iceberg_snapshots(self, relation: Any, versions_kept: int, model_name: str) -> int:
        """``expire_snapshots: true``: expire the snapshots beyond the newest
        ``versions_kept`` (versions/iceberg_expiry.py); returns how many were expired
        (0, and no procedure call, when the table holds no more than that)."""
        count_sql = iceberg_expiry.snapshot_count_sql(str(relation))
        before = int(self.sql.rows(count_sql)[0][0])
        if before <= versions_kept:
            return 0
        call = iceberg_expiry.expire_snapshots_sql(
            self.sql.default_catalog(),
            str(relation.schema),
            str(relation.identifier),
            versions_kept,
            clock.now_ms(),
        )
        try:
            self.sql.rows(call)
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            raise iceberg_expiry.expiry_error(model_name, exc) from exc
        expired = before - int(self.sql.rows(count_sql)[0][0])
        logger.info(
            f"mutable_table '{model_name}': expired {expired} Iceberg snapshot(s) beyond "
            f"versions_kept: {versions_kept}"
        )
        return expired

    # --- the version operations' phases (versions/kept_version_phases.py) --------------

    def kept_settings(self, settings: Mapping[str, Any], model_name: str) -> dict[str, Any]:
        """A model's ``versions_kept`` and ``expire_snapshots`` (its config's values),
        checked; a value that is not one fails naming the model."""
        subject = f"mutable_table '{model_name}'"
        return {
            "versions_kept": kept_versions.validate_versions_kept(
                settings.get("versions_kept"), subject
            ),
            "expire_snapshots": iceberg_expiry.validate_expire_snapshots(
                settings.get("expire_snapshots"), subject
            ),
        }

    def history(
        self, relation: Any, state: Mapping[str, Any], settings: Mapping[str, Any], model: str
    ) -> dict[str, Any]:
        """``mutable_table_history``: the kept versions, newest first (``rows``), the
        table it prints (``table``), and the model's ``versions_kept`` (``settings``: its
        config's values, checked here)."""
        versions_kept = self.kept_settings(settings, model)["versions_kept"]
        rows = format_reads(state["file_format"], self.sql.rows).history(
            str(relation), state["location"], versions_kept
        )
        return {
            "rows": rows,
            "table": kept_version_phases.history_table(rows),
            "versions_kept": versions_kept,
        }

    def as_of(
        self,
        relation: Any,
        state: Mapping[str, Any],
        versions_kept: int,
        version: Any,
        timestamp: Any,
        tenant: Optional[str],
        subject: str,
    ) -> str:
        """``mutable_table_as_of()``: a FROM item with the rows of a kept version, scoped
        to ``tenant`` in a bound run (``versions_kept``: the model's config value, checked
        here)."""
        versions_kept = self.kept_settings(
            {"versions_kept": versions_kept}, str(relation.identifier)
        )["versions_kept"]
        kept = kept_version_phases.kept_version(
            self.sql.rows,
            str(relation),
            str(relation.identifier),
            state["file_format"],
            state["location"],
            versions_kept,
            subject,
            version,
            timestamp,
        )
        return version_reads.as_of_sql(kept["source"], tenant)

    def rollback_plan(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        state: Mapping[str, Any],
        settings: Mapping[str, Any],
        to_version: Any,
        model_name: str,
        subject: str,
    ) -> dict[str, Any]:
        """``rollback_mutable_table``: the kept version (``version``, ``history``,
        ``location``) and the statements that make its rows the table's (``merge_sql``,
        ``change_set_sql``; kept_version_phases.rollback_statements), the rollback's
        ``definition`` (the table's, with the model's ``versions_kept``), the model's
        ``expire_snapshots`` (``settings``: its config's values, checked here), whether
        the format commits it with a MERGE (``uses_merge``) and its ``run_id``."""
        checked = self.kept_settings(settings, model_name)
        versions_kept = checked["versions_kept"]
        definition = RunDefinition.of(definition).with_run_values(versions_kept=versions_kept)
        version = version_reads.require_version(to_version, subject)
        kept = kept_version_phases.kept_version(
            self.sql.rows,
            str(relation),
            model_name,
            state["file_format"],
            state["location"],
            versions_kept,
            subject,
            version,
        )
        statements = kept_version_phases.rollback_statements(
            self.sql.rows, definition, str(relation), kept["source"]
        )
        return {
            **kept,
            **statements,
            "definition": definition,
            "expire_snapshots": checked["expire_snapshots"],
            "uses_merge": table_format(state["file_format"]).applies_by_merge,
            "run_id": version_locations.new_run_id(),
        }
