"""The service for a batch that drifts from the stored table: its schema against the
stored one and what evolves in place (schema_reconciliation, schema_evolution), values a
narrower column must hold exactly (exact_casts), and a table another materialization
built (adoption). The run's start and the stored table's state call it (run_service.py,
table_state.py); the face's ``adapter.mutable_evolve_schema`` (impl.py) hands its call
here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine.describe import result_rows
from dbt.adapters.jammi.mutable_table import (
    adoption,
    exact_casts,
    hive_adoption,
    schema_evolution,
    schema_reconciliation,
)
from dbt.adapters.jammi.mutable_table.definition_change import check_definition_change
from dbt.adapters.jammi.mutable_table.session_formats import SessionFormats
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.table_properties import describe_location
from dbt.adapters.jammi.mutable_table.version_locations import new_run_id


class DriftService:
    """``formats``: the session's (what ``auto`` resolves to, for an adoption)."""

    def __init__(self, sql: SqlSession, formats: SessionFormats) -> None:
        self.sql, self.formats = sql, formats

    # --- definition after a schema change -------------------------------------

    def reconcile_stored_schema(
        self,
        model_name: str,
        batch_definition: Mapping[str, Any],
        stored_columns: Sequence[Any],
        stored_definition: Optional[Mapping[str, Any]] = None,
        stored_file_format: Optional[str] = None,
        requested_file_format: Optional[str] = None,
        table_properties: Optional[Mapping[str, str]] = None,
    ) -> dict[str, Any]:
        """How the batch applies to the existing table; raises, before anything is
        written, if the definition changes what the stored rows were written under
        (primary key, history, file format) or the schema changes in a way the options
        and the format do not allow (schema_evolution.py)."""
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
        evolution = None
        if stored_file_format:
            evolution = table_format(stored_file_format).evolution(
                table_properties or {}, batch_definition.get("tblproperties")
            )
            if evolution.type_widening:
                # Delta widens beyond tinyint -> smallint -> int from 4.0 (Spark 4)
                evolution = evolution.on_spark(self.sql.spark_version())
        result = schema_reconciliation.reconcile_schema(
            model_name, batch_definition, pairs, evolution
        )
        return {
            "definition": result.definition,
            "new_columns": result.new_columns,
            "missing_columns": result.missing_columns,
            "checked_casts": result.checked_casts,
            "widened": result.evolution.widened,
            "added_fields": result.evolution.added_fields,
            "dropped": result.evolution.dropped,
        }

    def evolve_schema(self, model_name: str, statements: Sequence[str]) -> None:
        """Run the in-place schema changes (get_schema_evolution_sql), in order; a change
        the table's metastore refuses fails the run with the fix
        (schema_evolution.metastore_refusal)."""
        for sql in statements:
            try:
                self.sql.trusted(sql)
            except Exception as error:
                refusal = schema_evolution.metastore_refusal(model_name, str(error))
                if refusal is None:
                    raise
                raise refusal from None

    def reconciled_schema(
        self,
        model_name: str,
        batch_definition: Mapping[str, Any],
        state: Mapping[str, Any],
        requested_file_format: Optional[str],
    ) -> dict[str, Any]:
        """``reconcile_stored_schema`` against a stored table's state."""
        return self.reconcile_stored_schema(
            model_name,
            batch_definition,
            state["columns"],
            state["definition"],
            state["file_format"],
            requested_file_format,
            state["table_properties"],
        )

    def check_exact_values(
        self,
        model_name: str,
        definition: Mapping[str, Any],
        checked_casts: Sequence[Sequence[str]],
        file_format: str,
        batch_source: str,
    ) -> None:
        """Fail the run, before anything is written, when the batch holds a value that a
        checked column's stored type cannot hold exactly, or that the table's file format
        would not read back as written (exact_casts.py): one query over the batch,
        stopped at the first offending rows; none when nothing needs a check."""
        batch = set(definition.get("batch_columns") or [])
        columns = [c for c in definition["columns"] if c[0] in batch]
        checks = exact_casts.value_checks(checked_casts, file_format, columns)
        if not checks:
            return
        rows = self.sql.rows(exact_casts.value_check_sql(checks, batch_source))
        error = exact_casts.value_check_error(model_name, checks, rows)
        if error is not None:
            raise error

    def adoption_plan(
        self,
        model_name: str,
        relation: Any,
        batch_definition: Mapping[str, Any],
        rows: Sequence[Sequence[Any]],
        stored_columns: Sequence[Any],
        requested_file_format: Optional[str],
        bound_tenant: Optional[str],
    ) -> dict[str, Any]:
        """Whether the existing table another materialization built can be adopted, and
        what adoption adds (adoption.py): raises before anything is written when its
        format, its columns or its stored keys (NULL or duplicate, named by samples)
        refuse it. ``rows``, ``stored_columns``: its ``describe table extended``."""
        stored = [[c.name, c.data_type] for c in stored_columns]
        plan = adoption.plan_adoption(
            model_name,
            str(relation),
            batch_definition,
            stored,
            adoption.describe_provider(rows),
            adoption.describe_partitioned(rows),
            requested_file_format,
            bound_tenant,
            self.formats.resolve("auto", model_name),
        )
        if plan.from_hive and self.sql.table_listed(hive_adoption.kept_name(str(relation))):
            raise JammiValidationError(
                f"mutable_table '{model_name}'",
                f"{relation} is a Hive-format table, whose rows adoption rewrites as "
                f"{plan.file_format}, keeping the Hive table as "
                f"{hive_adoption.kept_name(str(relation))}; a table of that name exists",
                f"rename or drop {hive_adoption.kept_name(str(relation))}",
            )
        violations = result_rows(self.sql.rows(plan.violations_sql))
        error = adoption.key_violations_error(model_name, str(relation), plan.key, violations)
        if error is not None:
            raise error
        conversion = None
        if plan.from_hive:
            conversion = hive_adoption.HiveConversion(
                relation=str(relation),
                file_format=plan.file_format,
                location=hive_adoption.new_location(str(describe_location(rows)), new_run_id()),
                add_tenant=not hive_adoption.stored_tenant(stored),
            )
        return {
            "file_format": plan.file_format,
            "add_tenant_column": plan.add_tenant_column,
            "key": plan.key,
            "violations_sql": plan.violations_sql,
            "hive_conversion": None if conversion is None else asdict(conversion),
        }
