"""Render the scd2 change-set planner offline (no dbt run, no Spark).

A plain Jinja environment over the adapter's macro folder, with the few context members
the planner uses: ``adapter.dispatch`` (to the ``default__`` implementation),
``adapter.mutable_planner`` (its ``scd2()``), ``adapter.sql_string`` and dbt's ``return``.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, Optional

import jinja2

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table.planner_rules import PlannerRules, planner_rules

MACROS = Path(__file__).resolve().parents[1] / "dbt" / "include" / "jammi" / "macros"
CHANGE_SET = "mutable_table/planner/scd2_change_set.sql"
TENANT = "model_helpers/tenant.sql"
VERSION_RULE = "mutable_table/planner/version_rule.sql"
CHANGE_SET_HELPERS = "mutable_table/planner/change_set.sql"


class _StubAdapter:
    def __init__(self) -> None:
        self.module: Any = None

    def dispatch(self, name: str, package: Optional[str] = None) -> Any:
        return getattr(self.module, f"default__{name}")

    def mutable_planner(self, definition: dict) -> PlannerRules:
        return planner_rules(definition)

    def sql_string(self, value: Any) -> str:
        return sql_string_literal(str(value))

    def quote_column(self, name: str) -> str:
        return quote_identifier(name)


def render_scd2_change_set(
    definition: dict,
    source: str,
    target: Optional[str],
    tenant: Optional[str] = None,
    run_started_at: Optional[datetime.datetime] = None,
    scan_target_once: bool = False,
) -> str:
    adapter = _StubAdapter()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"]
    )
    env.globals.update(
        adapter=adapter,
        run_started_at=run_started_at,
        var=lambda name, default=None: default,
        **{"return": _identity},
    )
    tenant_macros = env.get_template(TENANT).module
    version_macros = env.get_template(VERSION_RULE).module
    env.globals.update(
        mutable_tenant_expr=tenant_macros.mutable_tenant_expr,
        mutable_target_scope_clause=tenant_macros.mutable_target_scope_clause,
        mutable_version_expr=version_macros.mutable_version_expr,
        mutable_same_value=env.get_template(CHANGE_SET_HELPERS).module.mutable_same_value,
    )
    adapter.module = env.get_template(CHANGE_SET).module
    return str(
        adapter.module.get_scd2_change_set_sql(definition, source, target, tenant, scan_target_once)
    )


def _identity(value: Any) -> Any:
    return value
