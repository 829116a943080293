"""The stored table's service: what a run or an operation knows of an existing mutable
table before it plans (one ``describe table extended``), a table another
materialization built checked for adoption, how a table records itself in the
registry, a batch check's failure with its samples, and the planner's answers. The
face's ``adapter.mutable_table_state``, ``mutable_batch_failure``, ``mutable_planner``
and ``mutable_full_refresh_allowed`` (impl.py) hand their calls here. Each method
delegates to the module that decides (``run_config``, ``table_properties``,
``table_records``, ``run_errors``, ``planner_rules``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.common.validation import sql_string_literal, validate_registry_schema
from dbt.adapters.jammi.engine.describe import result_rows
from dbt.adapters.jammi.mutable_table import (
    hive_adoption,
    run_config,
    run_errors,
    table_properties,
    table_records,
    tblproperties_config,
)
from dbt.adapters.jammi.mutable_table.drift_service import DriftService
from dbt.adapters.jammi.mutable_table.planner_rules import PlannerRules, planner_rules
from dbt.adapters.jammi.mutable_table.table_format import table_format

# dbt-spark's columns of a ``describe table extended`` already run: (relation, its rows)
ParseDescribe = Callable[[Any, Any], list[Any]]


class TableStateService:
    """``parse_describe``: the adapter's ``parse_describe_extended``; ``hidden_columns``:
    columns dbt-spark leaves out of a table's (Hudi's metadata)."""

    def __init__(
        self,
        sql: SqlSession,
        drift: DriftService,
        parse_describe: ParseDescribe,
        hidden_columns: Sequence[str] = (),
    ) -> None:
        self.sql, self.drift = sql, drift
        self.parse_describe, self.hidden_columns = parse_describe, tuple(hidden_columns)

    def table_records(
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
        registry = str(self.registry_relation(relation, registry_schema, definition))
        first_version = None if table_format(file_format).applies_by_merge else 1
        return {
            "create_registry": table_records.create_registry_sql(registry, file_format),
            "register": table_records.registry_row_sql(
                registry, str(relation), definition, file_format, invocation_id
            ),
            "properties": table_records.properties_clause(
                definition, file_format, first_version, first=True
            ),
        }

    def registry_relation(
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

    @staticmethod
    def full_refresh_allowed(flag: Any, config_value: Any) -> bool:
        return run_config.full_refresh_allowed(flag, config_value)

    # --- locations and versions --------------------------------------------------

    def table_state(
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
        described = self.sql.trusted(f"describe table extended {relation}")
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
        if not self.sql.table_listed(f"{schema}.{table_records.REGISTRY_IDENTIFIER}"):
            return None
        registry = self.registry_relation(relation, schema)
        rows = self.sql.rows(
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
        if file_format is not None and table_format(file_format).applies_by_merge:
            return None
        location = table_properties.describe_location(rows)
        if location:
            self.sql.trusted(f"refresh table {relation}")
        return location

    def _describe_columns(self, relation: Any, described: Any) -> list[Any]:
        """dbt-spark's columns of a ``describe table extended`` already run (what
        ``get_columns_in_relation`` returns)."""
        columns = self.parse_describe(relation, described.rows)
        return [c for c in columns if c.name not in self.hidden_columns]

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
        plan = self.drift.adoption_plan(
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

    # --- errors --------------------------------------------------------------------

    def batch_failure(
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
                table = self.sql.without_constraint_propagation(sql)
            else:
                table = self.sql.execute(sql, fetch=True)[1]
            rows = result_rows(table)
            last = position == len(checks) - 1
            if rows or (last and fallback_kind):
                for statement in cleanup:
                    self.sql.trusted(statement)
                kind = str(check["kind"]) if rows else str(fallback_kind)
                columns = list(getattr(table, "column_names", []) or [])
                run_errors.batch_error(model_name, kind, rows, columns, check.get("detail", ""))
        return ""

    # --- the planners: the rules' parts of the change set, scd2's intervals -------------

    @staticmethod
    def planner(definition: Mapping[str, Any]) -> PlannerRules:
        """What the planner macros ask about the attempt's definition (planner_rules.py):
        a key's actions, tombstones, TTL, merge functions' sums, the identity guard, the
        changelog's stored values, the batch checks' errors, scd2's inputs."""
        return planner_rules(definition)
