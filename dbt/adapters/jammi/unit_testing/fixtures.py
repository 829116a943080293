"""dbt unit tests (``unit_tests:``, dbt 1.8+) of models that read topics.

How dbt compiles a unit test (dbt-core 1.11: ``parser/unit_tests.py``,
``context/providers.py``, ``compilation.py``): the node has the resource type
``unit_test`` (``model.resource_type`` in Jinja; its materialization is ``unit``) and the
tested model's SQL. Every ``given:`` input becomes an ephemeral model, so
``ref('cdc_orders')`` renders as ``__dbt__cte__cdc_orders``, a relation of type ``cte``
with no schema, whose rows are the fixture. dbt renders the model's SQL first and then
each fixture; a dict or csv fixture is typed from the columns of the real input relation
(``adapter.get_columns_in_relation(this)`` in dbt's ``get_fixture_sql``).

In a unit test the topic macros read the fixture and nothing else: no ``topics``
registry, no ``topic_consumers``, no consumed range remembered for the post-hook. What
a fixture stands for depends on how the model reads it:

- ``events`` (``topic_events()``): the events the model receives -- the topic's
  columns plus ``event_offset``, ``event_row_idx``, ``event_produced_at`` and
  ``event_tenant_id``. The bound tenant's scope (on ``event_tenant_id``) and ``where=``
  still apply; there is no offset range, every fixture row is unconsumed.
- ``rows`` (``topic_backing_table()``, ``topic_range()``): the stored rows -- ``_offset``,
  ``_row_idx``, ``_produced_at``, the topic's columns, ``tenant_id`` (what ``ref()`` of
  the topic returns).
- ``relation`` (``tenant_scoped()``): the relation's own rows, as dbt types them.

So that dbt accepts and types the event columns, the model's rendering records how it
reads each fixture (``FixtureReads``), and when dbt then asks for the columns of that
input relation, in the same unit test, the adapter answers with the columns the fixture
stands for (``fixture_columns``): for a topic, its view's columns with the engine
columns renamed; for a changelog (``topic_events(ref('<mutable table>'))``), the
changelog's event columns, derived from the table's recorded definition (one
``describe table extended``, the statement dbt would have run anyway). One fixture read
two ways in one unit test is an error: dbt gives each input one fixture.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import TENANT_COLUMN, sql_string_literal
from dbt.adapters.jammi.mutable_table.rules.changelog import event_columns
from dbt.adapters.jammi.mutable_table.table_properties import stored_definition
from dbt.adapters.jammi.topic.publish import ENGINE_COLUMNS, EVENT_COLUMNS

# dbt's NodeType.Unit: the resource type of the node a unit test compiles to.
UNIT_TEST_RESOURCE_TYPE = "unit_test"
# dbt's ephemeral prefix (BaseRelation.add_ephemeral_prefix): a given input's CTE name.
FIXTURE_PREFIX = "__dbt__cte__"

EVENTS = "events"
ROWS = "rows"
RELATION = "relation"
READS = {
    EVENTS: "as events (topic_events)",
    ROWS: "as stored rows (topic_backing_table / topic_range)",
    RELATION: "as a relation (tenant_scoped)",
}

EVENT_TENANT_COLUMN = EVENT_COLUMNS[TENANT_COLUMN]

ColumnPairs = list[tuple[str, str]]


def is_unit_test(model: Any) -> bool:
    """Whether ``model`` (the Jinja ``model``) is the node of a dbt unit test."""
    return isinstance(model, Mapping) and model.get("resource_type") == UNIT_TEST_RESOURCE_TYPE


def unit_test_subject(model: Mapping[str, Any]) -> str:
    return f"unit test '{model.get('name')}'"


def fixture_name(relation: Any) -> Optional[str]:
    """The fixture (CTE) a unit test's ``ref()``/``source()`` rendered, else None."""
    if isinstance(relation, str):
        name = relation
    elif str(getattr(relation, "type", "")) == "cte":
        name = str(getattr(relation, "identifier", "") or "")
    else:
        return None
    return name if name.startswith(FIXTURE_PREFIX) else None


def require_fixture(relation: Any, reads: str, subject: str) -> str:
    name = fixture_name(relation)
    if name is None:
        raise JammiValidationError(
            subject,
            f"the model reads {relation} {READS[reads]}, which is not one of the unit "
            "test's given inputs; in a unit test the topic macros read fixtures only",
            "read the topic through ref() and give it under given: (- input: ref('...'))",
        )
    return name


class FixtureReads:
    """How the unit test being compiled reads each of its fixtures: recorded while dbt
    renders the tested model's SQL, taken when dbt types that fixture, right after, in
    the same node. Keyed by the unit test's unique id (which is also the name of the
    connection dbt runs it on), so no other node ever sees an entry."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: dict[str, dict[str, tuple[str, str]]] = {}

    def record(self, unit_test: str, fixture: str, reads: str, subject: str) -> None:
        with self._lock:
            fixtures = self._reads.setdefault(unit_test, {})
            known = fixtures.get(fixture)
            if known is not None and known[0] != reads:
                input_name = fixture[len(FIXTURE_PREFIX) :]
                raise JammiValidationError(
                    subject,
                    f"the model reads the input '{input_name}' {READS[known[0]]} and "
                    f"{READS[reads]}; a unit test gives each input one fixture, which "
                    "cannot stand for both",
                    "unit-test the two reads in separate models, or test this model "
                    "with dbt build on data",
                )
            fixtures[fixture] = (reads, subject)

    def take(self, unit_test: Optional[str], identifier: str) -> Optional[tuple[str, str]]:
        """``(reads, subject)`` for the fixture of input relation ``identifier``, if the
        unit test ``unit_test`` recorded one (and forget it)."""
        if unit_test is None:
            return None
        with self._lock:
            fixtures = self._reads.get(unit_test)
            if not fixtures:
                return None
            return fixtures.pop(FIXTURE_PREFIX + identifier, None)

    def forget(self, unit_test: Optional[str]) -> None:
        if unit_test is None:
            return
        with self._lock:
            self._reads.pop(unit_test, None)


# --- what a fixture stands for ----------------------------------------------------


def topic_rows_columns(
    columns: Sequence[tuple[str, str]], properties: Mapping[str, Any]
) -> Optional[ColumnPairs]:
    """The stored rows of the topic that ``ref()`` of this relation names (``_offset``,
    ``_row_idx``, ``_produced_at``, the topic's columns, ``tenant_id``), from the
    relation's own columns and ``jammi.*`` properties; None if it names no topic.

    A topic's view has exactly those columns. A mutable table with ``changelog: true``
    stands for its changelog topic, whose columns follow from its recorded definition."""
    definition = stored_definition(properties)
    if definition is not None and definition.get("changelog"):
        return [
            *((name, "bigint") for name in ENGINE_COLUMNS),
            *((str(c[0]), str(c[1])) for c in event_columns(definition)),
            (TENANT_COLUMN, "string"),
        ]
    names = tuple(name for name, _ in columns)
    if names[: len(ENGINE_COLUMNS)] == ENGINE_COLUMNS and names[-1:] == (TENANT_COLUMN,):
        return [(name, dtype) for name, dtype in columns]
    return None


def events_columns(rows: Sequence[tuple[str, str]]) -> ColumnPairs:
    """The columns ``topic_events()`` gives a model, in its order, from the stored rows'."""
    engine = [(EVENT_COLUMNS[name], dtype) for name, dtype in rows if name in ENGINE_COLUMNS]
    topic = [(name, dtype) for name, dtype in rows if name not in EVENT_COLUMNS]
    tenant = [(EVENT_TENANT_COLUMN, dtype) for name, dtype in rows if name == TENANT_COLUMN]
    return [*engine, *topic, *tenant]


def fixture_columns(
    reads: str,
    columns: Sequence[tuple[str, str]],
    properties: Mapping[str, Any],
    relation: str,
    subject: str,
) -> ColumnPairs:
    """The columns (name, type) of a fixture given for ``relation`` and read ``reads``."""
    if reads == RELATION:
        return list(columns)
    rows = topic_rows_columns(columns, properties)
    if rows is None:
        raise JammiValidationError(
            subject,
            f"the model reads {relation} {READS[reads]}, but it is neither a topic nor a "
            "mutable_table with changelog: true",
            "pass ref() of a model with materialized='topic' (or of a mutable_table with "
            "changelog: true)",
        )
    return rows if reads == ROWS else events_columns(rows)


def fixture_events_sql(fixture: str, tenant: Optional[str], where: Optional[str]) -> str:
    """The events a consumer reads from a fixture that stands for them: the bound
    tenant's and shared events (``event_tenant_id``), then ``where``, as
    ``topic.events_select_sql`` scopes and filters the backing table. No offset range:
    every fixture row is an event the model has not consumed."""
    source = fixture
    if tenant is not None:
        column, literal = EVENT_TENANT_COLUMN, sql_string_literal(tenant)
        source = f"(select * from {fixture} where ({column} = {literal} or {column} is null))"
    sql = f"select * from {source}"
    return f"{sql} where ({where})" if where else sql


def not_built_error(relation: str, subject: str) -> JammiValidationError:
    return JammiValidationError(
        subject,
        f"dbt types a fixture's rows from the columns of its input, and {relation} does "
        "not exist yet",
        "build it first (dbt build runs a model's unit tests after the model's parents; "
        "or dbt run -s <input>), or give the fixture as format: sql, which dbt does not "
        "type",
    )
