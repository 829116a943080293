"""The mutable_table methods the Jinja materialization calls (``adapter.mutable_*``).

Kept out of impl.py: JammiAdapter mixes this in. Every method delegates to
``mutable.py`` (decisions) or ``storage.py`` (version directories).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi import mutable, storage
from dbt.adapters.jammi.definition_change import check_definition_change
from dbt.adapters.jammi.validation import sql_string_literal

logger = AdapterLogger("Jammi")


def _rows(table: Any) -> list[list[Any]]:
    return [list(row) for row in getattr(table, "rows", table) or []]


class MutableTableAdapterMixin(metaclass=AdapterMeta):
    """``adapter.mutable_*`` methods; mixed into JammiAdapter."""

    config: Any

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
    def mutable_list_versions(self, base: str) -> list[str]:
        if not self._has_local_filesystem():
            return []
        return sorted(storage.list_children(base))

    # --- tenant scope ------------------------------------------------------------

    @available
    def mutable_check_tenant_reads(
        self, model_name: str, compiled_sql: str, relation_names: Sequence[str], tenant: str
    ) -> None:
        """Fail a run bound to ``tenant`` that reads a mutable table without
        tenant_scoped(), instead of silently showing it other tenants' rows."""
        literal = sql_string_literal(tenant)
        unscoped = mutable.unscoped_tenant_reads(compiled_sql or "", relation_names, literal)
        if unscoped:
            raise mutable.MutableRunError(
                f"model '{model_name}' reads {', '.join(unscoped)} without tenant_scoped() in "
                f"a run bound to a tenant; it would see every tenant's rows.\n  Fix: read it "
                "as {{ tenant_scoped(ref('...')) }}"
            )

    # --- errors --------------------------------------------------------------------

    @available
    def mutable_batch_error(self, model_name: str, kind: str, table: Any, detail: str = "") -> None:
        columns = list(getattr(table, "column_names", []) or [])
        mutable.batch_error(model_name, kind, _rows(table), columns, detail)

    @available
    def mutable_concurrent_commit_error(
        self, model_name: str, planned: str, current: Optional[str]
    ) -> None:
        mutable.concurrent_commit_error(model_name, planned, current)

    # --- all-or-nothing registration ----------------------------------------------

    @available
    def mutable_execute_all_or_nothing(
        self,
        statements: Sequence[str],
        undo_statements: Sequence[str] = (),
        undo_paths: Sequence[str] = (),
    ) -> None:
        """Run ``statements`` in order; if one fails, run every undo statement and remove
        every undo path (best effort, each independently), then re-raise."""
        execute = self.execute  # type: ignore[attr-defined]  # SQLAdapter.execute
        try:
            for sql in statements:
                execute(sql, fetch=True)
        except BaseException:
            for undo in undo_statements:
                try:
                    execute(undo)
                except Exception as exc:  # noqa: BLE001 - keep undoing
                    logger.warning(f"mutable_table: undo step failed: {exc}")
            for path in undo_paths:
                try:
                    self.mutable_remove_path(path)
                except Exception as exc:  # noqa: BLE001
                    logger.warning(f"mutable_table: could not remove {path}: {exc}")
            raise
