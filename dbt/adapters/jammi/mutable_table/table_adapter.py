"""The mutable_table methods the Jinja materialization calls (``adapter.mutable_*``).

Kept out of impl.py: JammiAdapter mixes this in (through ``MutableCommitAdapterMixin``,
mutable_table/commit/commit_adapter.py, which adds the commit paths). Every method
delegates to the module that decides (``run_config``, ``schema_reconciliation``,
``table_properties``, ``version_locations``, ``run_errors``) or to ``engine/storage.py``
(version directories).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.validation import sql_string_literal, validate_registry_schema
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.engine.describe import result_rows
from dbt.adapters.jammi.mutable_table import (
    hive_adoption,
    run_config,
    run_errors,
    table_properties,
    table_records,
    tblproperties_config,
)
from dbt.adapters.jammi.mutable_table.commit import merge_commit, rewrite_commit
from dbt.adapters.jammi.mutable_table.drift_adapter import MutableDriftAdapterMixin
from dbt.adapters.jammi.mutable_table.planner_rules import PlannerRules, planner_rules

# A shared relation's create racing another run's create of it: tries in all.
CREATE_RACE_ATTEMPTS = 4

logger = AdapterLogger("Jammi")

# A rewrite run that loses its commit to a concurrent run re-plans this many times in all.
RETRY_PAUSE_S = 0.5


class MutableTableAdapterMixin(MutableDriftAdapterMixin):
    """``adapter.mutable_*`` methods; mixed into JammiAdapter."""

    config: Any

    def mutable_table_records(
        self,
        definition: Mapping[str, Any],
        relation: Any,
        file_format: str,
        registry_schema: Optional[str],
        invocation_id: str,
    ) -> dict[str, str]:
        """How a table being created or adopted records itself (table_records.py): the
        registry's ``create_registry`` (if not exists) and its ``register`` row, and the
        new table's ``properties`` clause (the rewrite formats start at version 1)."""
        registry = str(self._mutable_registry_relation(relation, registry_schema, definition))
        first_version = None if file_format in merge_commit.MERGE_FORMATS else 1
        return {
            "create_registry": table_records.create_registry_sql(registry, file_format),
            "register": table_records.registry_row_sql(
                registry, str(relation), definition, file_format, invocation_id
            ),
            "properties": table_records.properties_clause(
                definition, file_format, first_version, first=True
            ),
        }

    def _mutable_registry_relation(
        self, relation: Any, registry_schema: Optional[str], definition: Any = None
    ) -> Any:
        """The ``mutable_tables`` registry: in the table's schema unless config
        ``registry_schema`` names another."""
        subject = f"model '{(definition or {}).get('table_id') or relation.identifier}'"
        schema = validate_registry_schema(registry_schema, subject) or str(relation.schema)
        return relation.incorporate(
            path={"schema": schema, "identifier": table_records.REGISTRY_IDENTIFIER},
            type="table",
        )

    # --- run options -------------------------------------------------------------

    @available
    def mutable_full_refresh_allowed(self, flag: Any, config_value: Any) -> bool:
        return run_config.full_refresh_allowed(flag, config_value)

    # --- locations and versions --------------------------------------------------

    @available
    def mutable_table_state(
        self,
        relation: Any,
        subject: Optional[str] = None,
        adopt: Optional[Mapping[str, Any]] = None,
        model_name: Optional[str] = None,
        registry_schema: Optional[str] = None,
    ) -> dict[str, Any]:
        """What a run or an operation knows of an existing mutable table before it plans,
        from one ``describe table extended``: its ``jammi.*`` properties, file format,
        current version directory (the rewrite formats), recorded definition, every
        table property and its columns. ``adopt`` (a run whose table another
        materialization built: the batch's ``definition``, the bound ``tenant``, the
        ``requested`` file format): that table checked for adoption instead, or nothing
        to keep when the run rebuilds it. Anything else that is not a mutable table is a
        clear error (``subject``: the operation that met it). A definition Spark redacted
        (written before the hex encoding) is read from the registry
        (``registry_schema``), and the run rewrites the property."""
        described = self._execute_trusted(f"describe table extended {relation}")
        rows = result_rows(described)
        properties = table_properties.describe_properties(rows)
        ours = properties.get("jammi.kind") == "mutable_table"
        if not ours and adopt is not None:
            return self._adopted_table_state(relation, described, rows, adopt, str(model_name))
        if not ours:
            raise table_properties.foreign_table_error(str(relation), subject, model_name)
        file_format = properties.get("jammi.file_format") or (
            "delta" if getattr(relation, "is_delta", False) else "parquet"
        )
        location = self._refreshed_location(relation, rows, file_format)
        definition = table_properties.stored_definition(properties)
        stale = definition is None and properties.get("jammi.definition") is not None
        if stale:
            named = f"model '{model_name}'" if model_name else (subject or str(relation))
            definition = self._registered_definition(relation, registry_schema, named)
        return {
            "properties": properties,
            "file_format": file_format,
            "location": location,
            "definition": definition,
            "property_stale": stale,
            "table_properties": tblproperties_config.describe_table_properties(rows),
            "columns": self._describe_columns(relation, described),
        }

    def _registered_definition(
        self, relation: Any, registry_schema: Optional[str], subject: str
    ) -> Optional[dict[str, Any]]:
        """The latest definition the registry holds for ``relation``, or None."""
        schema = validate_registry_schema(registry_schema, subject) or str(relation.schema)
        if not self._table_listed(f"{schema}.{table_records.REGISTRY_IDENTIFIER}"):
            return None
        registry = self._mutable_registry_relation(relation, schema)
        rows = self._run_sql(
            f"select definition from {registry} where relation = "
            f"{sql_string_literal(str(relation))} order by registered_at desc limit 1"
        )
        return table_properties.parse_definition(rows[0][0]) if rows else None

    def _refreshed_location(
        self, relation: Any, rows: Sequence[Sequence[Any]], file_format: Optional[str]
    ) -> Optional[str]:
        """A rewrite format's current version directory (None for Delta and Iceberg). The
        connection may still hold the table resolved at an older version (another
        connection committed since, or this run re-plans after losing its commit): it
        reads from here on what the metastore points at now."""
        if file_format in merge_commit.MERGE_FORMATS:
            return None
        location = table_properties.describe_location(rows)
        if location:
            self._execute_trusted(f"refresh table {relation}")
        return location

    def _describe_columns(self, relation: Any, described: Any) -> list[Any]:
        """dbt-spark's columns of a ``describe table extended`` already run (what
        ``get_columns_in_relation`` returns)."""
        columns = self.parse_describe_extended(relation, described.rows)  # type: ignore[attr-defined]
        hudi = getattr(self, "HUDI_METADATA_COLUMNS", ())
        return [c for c in columns if c.name not in hudi]

    def _adopted_table_state(
        self,
        relation: Any,
        described: Any,
        rows: Sequence[Sequence[Any]],
        adopt: Mapping[str, Any],
        model_name: str,
    ) -> dict[str, Any]:
        """The state of a table another materialization built (mutable_adopt): checked
        for adoption before anything is written; with ``rebuild`` the run drops it and
        starts from the model's output, with no version directories of its own."""
        if adopt.get("rebuild"):
            return {
                "properties": {},
                "file_format": None,
                "location": None,
                "definition": None,
                "property_stale": False,
                "table_properties": {},
                "columns": [],
            }
        columns = self._describe_columns(relation, described)
        plan = self._adoption_plan(
            model_name,
            relation,
            adopt["definition"],
            rows,
            columns,
            adopt.get("requested"),
            adopt.get("tenant"),
        )
        conversion = plan.get("hive_conversion")
        if conversion is not None:
            # the state of the table the Hive table's rows become (hive_adoption.py),
            # written by mutable_adopt before the run's first write
            location = hive_adoption.location_of(plan["file_format"], conversion["location"])
            properties: dict[str, str] = {}
        else:
            location = self._refreshed_location(relation, rows, plan["file_format"])
            properties = tblproperties_config.describe_table_properties(rows)
        return {
            "properties": {},
            "file_format": plan["file_format"],
            "location": location,
            "definition": None,
            "property_stale": False,
            "table_properties": properties,
            "columns": columns,
            "adoption": adopt,
            "adoption_plan": plan,
        }

    # --- file system (embedded session only) ------------------------------------

    def mutable_remove_path(self, path: str) -> bool:
        if not self._has_local_filesystem():
            return False
        return storage.remove(path)

    def mutable_remove_empty_dir(self, path: str) -> bool:
        """Remove a directory that holds nothing (what a failed CTAS leaves)."""
        return self._has_local_filesystem() and storage.remove_if_empty(path)

    # --- errors --------------------------------------------------------------------

    @available
    def mutable_batch_failure(
        self,
        model_name: str,
        checks: Sequence[Mapping[str, Any]],
        fallback_kind: Optional[str] = None,
        cleanup: Sequence[str] = (),
    ) -> str:
        """Fail the run with up to 5 samples of the first check whose query finds rows
        (each ``{kind, sql, detail}``; ``unplanned``: a query over a change set, planned
        without Spark's constraint propagation, common/statements.py says why), after
        running ``cleanup``. When none finds rows: with ``fallback_kind`` the run fails
        with that kind alone (the model's output changed between two reads); else the
        checks passed."""
        for position, check in enumerate(checks):
            sql = str(check["sql"])
            if check.get("unplanned"):
                table = self._run_query_without_constraint_propagation(sql)
            else:
                table = self.execute(sql, fetch=True)[1]  # type: ignore[attr-defined]
            rows = result_rows(table)
            last = position == len(checks) - 1
            if rows or (last and fallback_kind):
                for statement in cleanup:
                    self._execute_trusted(statement)
                kind = str(check["kind"]) if rows else str(fallback_kind)
                columns = list(getattr(table, "column_names", []) or [])
                run_errors.batch_error(model_name, kind, rows, columns, check.get("detail", ""))
        return ""

    # --- all-or-nothing registration ----------------------------------------------

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
                    raise run_errors.MutableRunError(reason) from exc
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
                if rewrite_commit.already_exists(message):
                    return
                racing = merge_commit.is_commit_conflict(message)
                if not (racing or merge_commit.NON_EMPTY_LOCATION in message):
                    raise
                if attempt == CREATE_RACE_ATTEMPTS - 1:
                    raise
                time.sleep(0.5 * (attempt + 1))

    def _run_cleanup(self, cleanup: Sequence[str]) -> None:
        for sql in cleanup:
            self._best_effort(lambda s=sql: self.execute(s))  # type: ignore[attr-defined]

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

    # --- the planners: the rules' parts of the change set, scd2's intervals -------------

    @available
    def mutable_planner(self, definition: Mapping[str, Any]) -> PlannerRules:
        """What the planner macros ask about the attempt's definition (planner_rules.py):
        a key's actions, tombstones, TTL, merge functions' sums, the identity guard, the
        changelog's stored values, the batch checks' errors, scd2's inputs."""
        return planner_rules(definition)
