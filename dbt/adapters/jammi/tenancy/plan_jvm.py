"""The analyzed plan of a statement on ``method: session``, read from the JVM.

Spark parses and analyzes the statement without running it
(``CommandExecutionMode.SKIP``: a CTAS, insert or view creation is resolved, not
executed), and the plan is converted node by node into a :class:`PlanNode` tree for
``plan.unscoped_reads``. Nothing here reads SQL text: relations, attribute ids,
filter conditions and projections come from Spark's own objects.
"""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.jammi.tenancy.plan import (
    ALIAS,
    FILTER,
    OTHER,
    PROJECT,
    RELATION,
    VIEW,
    PlanNode,
    table_key,
)

_RELATIONS = {"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation"}


def analyzed_plan(spark: Any, sql: str, tenant: str) -> PlanNode:
    """Analyze ``sql`` in ``spark`` and return its plan tree (raises Spark's error)."""
    jvm = spark._jvm
    state = spark._jsparkSession.sessionState()
    parsed = state.sqlParser().parsePlan(sql)
    skip = jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    analyzed = state.executePlan(parsed, skip).analyzed()
    logical = jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.plans.logical.LogicalPlan")
    return _convert(analyzed, tenant, logical)


def dataframe_plan(dataframe: Any, tenant: str) -> PlanNode:
    """The analyzed plan of a DataFrame (a Python model's result, a read it made):
    Spark has analyzed it already; nothing runs."""
    spark = dataframe.sparkSession
    analyzed = dataframe._jdf.queryExecution().analyzed()
    logical = spark._jvm.java.lang.Class.forName(
        "org.apache.spark.sql.catalyst.plans.logical.LogicalPlan"
    )
    return _convert(analyzed, tenant, logical)


def _seq(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]


def _attrs(plan: Any) -> dict[str, int]:
    return {a.name().lower(): a.exprId().id() for a in _seq(plan.output())}


def _convert(plan: Any, tenant: str, logical: Any) -> PlanNode:
    kind = plan.getClass().getSimpleName()
    node = _node(plan, kind, tenant)
    nested = _seq(plan.children()) + _seq(plan.innerChildren())
    if not nested:
        nested = _plan_fields(plan, logical)
    nested += _seq(plan.subqueries())
    node.children = [_convert(p, tenant, logical) for p in nested if logical.isInstance(p)]
    return node


def _plan_fields(plan: Any, logical: Any) -> list[Any]:
    """Plans a leaf node holds as constructor fields without exposing them as children
    or inner children: a command the analyzer resolved keeps the queries it will run
    there (Delta's MERGE, UPDATE and DELETE are leaf commands holding their ``source``
    and ``target`` scans). Read only for leaves, so no plan is converted twice."""
    fields = [plan.productElement(i) for i in range(plan.productArity())]
    return [f for f in fields if logical.isInstance(f)]


def _node(plan: Any, kind: str, tenant: str) -> PlanNode:
    if kind in _RELATIONS:
        return PlanNode(RELATION, table=_relation_table(plan, kind), attrs=_attrs(plan))
    if kind == "View":
        return PlanNode(
            VIEW, table=table_key(plan.desc().identifier().unquotedString()), attrs=_attrs(plan)
        )
    if kind == "SubqueryAlias":
        return PlanNode(ALIAS)
    if kind == "Project":
        return PlanNode(PROJECT, passthrough=_passthrough(plan))
    if kind == "Filter":
        return PlanNode(FILTER, scope_attr=_scope_attr(plan.condition(), tenant))
    return PlanNode(OTHER)


def _relation_table(plan: Any, kind: str) -> Optional[str]:
    if kind == "LogicalRelation":
        table = plan.catalogTable()
        return table_key(table.get().identifier().unquotedString()) if table.isDefined() else None
    if kind == "HiveTableRelation":
        return table_key(plan.tableMeta().identifier().unquotedString())
    identifier = plan.identifier()
    return table_key(identifier.get().toString()) if identifier.isDefined() else None


def _attr_id(expr: Any) -> Optional[int]:
    if expr.getClass().getSimpleName() == "AttributeReference":
        return expr.exprId().id()
    return None


def _passthrough(plan: Any) -> dict[int, set[int]]:
    """Input attr id -> output ids, for outputs that are an input attr, as is or cast."""
    mapping: dict[int, set[int]] = {}
    for expr in _seq(plan.projectList()):
        kind = expr.getClass().getSimpleName()
        if kind == "AttributeReference":
            source, out = expr.exprId().id(), expr.exprId().id()
        elif kind == "Alias":
            child = expr.child()
            if child.getClass().getSimpleName() == "Cast":
                child = child.child()
            source, out = _attr_id(child), expr.exprId().id()
        else:
            continue
        if source is not None:
            mapping.setdefault(source, set()).add(out)
    return mapping


def _scope_attr(condition: Any, tenant: str) -> Optional[int]:
    """The attr id of ``(a = '<tenant>' OR a IS NULL)``, if that is the whole condition."""
    if condition.getClass().getSimpleName() != "Or":
        return None
    equal, is_null = condition.left(), condition.right()
    if equal.getClass().getSimpleName() != "EqualTo":
        return None
    if is_null.getClass().getSimpleName() != "IsNull":
        return None
    attr, literal = _attr_id(equal.left()), equal.right()
    if attr is None or attr != _attr_id(is_null.child()):
        return None
    if literal.getClass().getSimpleName() != "Literal" or literal.value() is None:
        return None
    if literal.dataType().typeName() != "string" or literal.value().toString() != tenant:
        return None
    return attr
