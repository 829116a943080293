"""dbt unit tests of topic consumers: the decisions (is this a unit test, what does a
fixture stand for) and the SQL the topic macros render there, offline (no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import jinja2
import pytest
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.relation import SparkRelation

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.table_properties import encode_definition
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql
from dbt.adapters.jammi.unit_testing.fixtures import (
    EVENTS,
    RELATION,
    ROWS,
    FixtureReads,
    events_columns,
    fixture_columns,
    fixture_events_sql,
    fixture_name,
    is_unit_test,
    topic_rows_columns,
)
from dbt.adapters.jammi.unit_testing.unit_testing_service import UnitTestingService

UNIT_TEST = {
    "resource_type": "unit_test",
    "name": "orders_by_position",
    "unique_id": "unit_test.shop.current_orders.orders_by_position",
    "config": {"materialized": "unit"},
}
MODEL = {
    "resource_type": "model",
    "name": "current_orders",
    "unique_id": "model.shop.current_orders",
    "config": {"materialized": "mutable_table"},
}
FIXTURE = SparkRelation.create(identifier="__dbt__cte__cdc_orders", type="cte")
TOPIC_VIEW = SparkRelation.create(schema="analytics", identifier="cdc_orders", type="view")

VIEW_COLUMNS = [
    ("_offset", "bigint"),
    ("_row_idx", "bigint"),
    ("_produced_at", "bigint"),
    ("order_id", "int"),
    ("op", "string"),
    ("tenant_id", "string"),
]


# --- is this a unit test, which fixture ---------------------------------------------


def test_unit_test_is_told_by_the_node_resource_type():
    assert is_unit_test(UNIT_TEST)
    assert not is_unit_test(MODEL)
    assert not is_unit_test({"resource_type": "test"})
    assert not is_unit_test(None)
    assert not is_unit_test(jinja2.Undefined())  # `model` in run-operation


def test_fixture_is_the_cte_dbt_renders_for_a_given_input():
    assert fixture_name(FIXTURE) == "__dbt__cte__cdc_orders"
    assert fixture_name("__dbt__cte__cdc_orders") == "__dbt__cte__cdc_orders"  # `this`
    assert fixture_name(TOPIC_VIEW) is None
    assert fixture_name(SparkRelation.create(identifier="orders", type="cte")) is None


# --- what a fixture stands for --------------------------------------------------------


def test_topic_view_stands_for_its_stored_rows_and_events_rename_engine_columns():
    assert topic_rows_columns(VIEW_COLUMNS, {}) == VIEW_COLUMNS
    assert events_columns(VIEW_COLUMNS) == [
        ("event_offset", "bigint"),
        ("event_row_idx", "bigint"),
        ("event_produced_at", "bigint"),
        ("order_id", "int"),
        ("op", "string"),
        ("event_tenant_id", "string"),
    ]
    assert fixture_columns(ROWS, VIEW_COLUMNS, {}, "analytics.cdc_orders", "t") == VIEW_COLUMNS
    assert fixture_columns(EVENTS, VIEW_COLUMNS, {}, "analytics.cdc_orders", "t") == (
        events_columns(VIEW_COLUMNS)
    )


def changelog_properties(**config: Any) -> dict[str, str]:
    """The ``jammi.*`` properties of a mutable table as ``describe table extended`` shows."""
    definition = MutableTableDefinition.from_config(
        "current_orders",
        {"order_id": "int", "status": "string", "v": "bigint"},
        {"primary_key": ["order_id"], "version_column": "v", **config},
    )
    return {"jammi.definition": encode_definition(definition.to_json())}


TABLE_COLUMNS = [
    ("order_id", "int"),
    ("status", "string"),
    ("v", "bigint"),
    ("tenant_id", "string"),
]


def test_mutable_table_with_changelog_stands_for_its_changelog_events():
    properties = changelog_properties(changelog=True)
    rows = fixture_columns(ROWS, TABLE_COLUMNS, properties, "analytics.current_orders", "t")
    assert rows == [
        ("_offset", "bigint"),
        ("_row_idx", "bigint"),
        ("_produced_at", "bigint"),
        ("change_kind", "string"),
        ("table_version", "bigint"),
        ("order_id", "int"),
        ("status", "string"),
        ("v", "bigint"),
        ("previous_status", "string"),
        ("previous_v", "bigint"),
        ("tenant_id", "string"),
    ]
    events = fixture_columns(EVENTS, TABLE_COLUMNS, properties, "analytics.current_orders", "t")
    assert [name for name, _ in events] == [
        "event_offset",
        "event_row_idx",
        "event_produced_at",
        "change_kind",
        "table_version",
        "order_id",
        "status",
        "v",
        "previous_status",
        "previous_v",
        "event_tenant_id",
    ]


def test_tenant_scoped_read_keeps_the_relation_columns():
    properties = changelog_properties(changelog=True)
    assert fixture_columns(RELATION, TABLE_COLUMNS, properties, "a.t", "t") == TABLE_COLUMNS


@pytest.mark.parametrize("properties", [{}, changelog_properties()])
def test_topic_read_of_a_relation_that_is_no_topic_is_refused(properties):
    with pytest.raises(JammiValidationError) as error:
        fixture_columns(EVENTS, TABLE_COLUMNS, properties, "analytics.current_orders", "unit x")
    assert "unit x: the model reads analytics.current_orders as events (topic_events)" in str(
        error.value
    )
    assert "neither a topic nor a mutable_table with changelog: true" in str(error.value)


# --- the SQL over a fixture -----------------------------------------------------------


def test_events_of_a_fixture_unbound_without_predicate_are_all_its_rows():
    assert fixture_events_sql("__dbt__cte__cdc_orders", None, None) == (
        "select * from __dbt__cte__cdc_orders"
    )


def test_events_of_a_fixture_are_scoped_then_filtered():
    sql = fixture_events_sql("__dbt__cte__cdc_orders", "o'hara", "op = 'd'")
    assert sql == (
        "select * from (select * from __dbt__cte__cdc_orders where "
        "(event_tenant_id = 'o\\'hara' or event_tenant_id is null)) where (op = 'd')"
    )


# --- which fixture is read how, within one unit test -----------------------------------


def test_reads_are_kept_per_unit_test_and_taken_once():
    reads = FixtureReads()
    reads.record("unit_test.a", "__dbt__cte__cdc_orders", EVENTS, "unit test 'a'")
    reads.record("unit_test.a", "__dbt__cte__cdc_orders", EVENTS, "unit test 'a'")
    assert reads.take("unit_test.b", "cdc_orders") is None  # another node
    assert reads.take(None, "cdc_orders") is None
    assert reads.take("unit_test.a", "cdc_orders") == (EVENTS, "unit test 'a'")
    assert reads.take("unit_test.a", "cdc_orders") is None
    reads.record("unit_test.a", "__dbt__cte__cdc_orders", ROWS, "unit test 'a'")
    reads.forget("unit_test.a")
    assert reads.take("unit_test.a", "cdc_orders") is None


def test_one_fixture_read_two_ways_is_an_error():
    reads = FixtureReads()
    reads.record("unit_test.a", "__dbt__cte__cdc_orders", EVENTS, "unit test 'a'")
    with pytest.raises(JammiValidationError, match="reads the input 'cdc_orders' as events"):
        reads.record("unit_test.a", "__dbt__cte__cdc_orders", ROWS, "unit test 'a'")


class _Sql:
    """The service's SQL interface: only which node this thread runs."""

    def __init__(self, running: Optional[str]) -> None:
        self.running = running

    def running_node(self) -> Optional[str]:
        return self.running


class _FixtureAdapter:
    """The face's unit-test methods over the service and a fake describe: what dbt's
    get_fixture_sql would be answered."""

    def __init__(self, running: Optional[str], described: Any) -> None:
        self._fixture_reads = FixtureReads()
        self.sql = _Sql(running)
        self.described = described
        self.describes = 0
        self.service = UnitTestingService(
            self.sql, self.describe_for_fixture, SparkColumn, self._fixture_reads
        )

    def describe_for_fixture(self, relation: Any) -> Any:
        self.describes += 1
        return self.described

    def unit_test_fixture(self, model: Any, relation: Any, reads: str) -> Optional[str]:
        return self.service.fixture(model, relation, reads)

    def unit_test_fixture_columns(self, relation: Any) -> Optional[list[Any]]:
        return self.service.fixture_columns(relation)

    def unit_test_forget_fixtures(self) -> None:
        self.service.forget_fixtures()


def described_view() -> tuple[list[SparkColumn], dict]:
    return [SparkColumn(column=name, dtype=dtype) for name, dtype in VIEW_COLUMNS], {}


def test_fixture_typed_as_events_while_its_unit_test_runs():
    adapter = _FixtureAdapter(UNIT_TEST["unique_id"], described_view())
    assert adapter.unit_test_fixture(MODEL, TOPIC_VIEW, EVENTS) is None  # a model run
    assert adapter.unit_test_fixture(UNIT_TEST, FIXTURE, EVENTS) == "__dbt__cte__cdc_orders"
    columns = adapter.unit_test_fixture_columns(TOPIC_VIEW)
    assert [(c.name, c.data_type, c.quoted) for c in columns][:2] == [
        ("event_offset", "bigint", "`event_offset`"),
        ("event_row_idx", "bigint", "`event_row_idx`"),
    ]
    # taken: a later look at the same relation is dbt-spark's again
    assert adapter.unit_test_fixture_columns(TOPIC_VIEW) is None
    assert adapter.describes == 1


def test_fixture_typing_applies_only_on_the_unit_tests_own_connection():
    adapter = _FixtureAdapter("model.shop.other", described_view())
    adapter.unit_test_fixture(UNIT_TEST, FIXTURE, EVENTS)
    assert adapter.unit_test_fixture_columns(TOPIC_VIEW) is None
    adapter.sql.running = UNIT_TEST["unique_id"]
    adapter.unit_test_forget_fixtures()
    assert adapter.unit_test_fixture_columns(TOPIC_VIEW) is None
    assert adapter.describes == 0


def test_tenant_scoped_fixture_is_typed_by_dbt_spark():
    adapter = _FixtureAdapter(UNIT_TEST["unique_id"], described_view())
    assert adapter.unit_test_fixture(UNIT_TEST, FIXTURE, RELATION) == "__dbt__cte__cdc_orders"
    assert adapter.unit_test_fixture(UNIT_TEST, TOPIC_VIEW, RELATION) is None
    assert adapter.unit_test_fixture_columns(TOPIC_VIEW) is None
    assert adapter.describes == 0


def test_fixture_of_an_input_that_does_not_exist_says_what_to_do():
    adapter = _FixtureAdapter(UNIT_TEST["unique_id"], None)
    adapter.unit_test_fixture(UNIT_TEST, FIXTURE, EVENTS)
    with pytest.raises(JammiValidationError) as error:
        adapter.unit_test_fixture_columns(TOPIC_VIEW)
    message = str(error.value)
    assert "unit test 'orders_by_position': dbt types a fixture's rows" in message
    assert "analytics.cdc_orders does not exist yet" in message
    assert "format: sql" in message


def test_topic_read_of_a_relation_that_is_not_given_is_refused_in_a_unit_test():
    adapter = _FixtureAdapter(UNIT_TEST["unique_id"], None)
    with pytest.raises(JammiValidationError, match="not one of the unit test's given inputs"):
        adapter.unit_test_fixture(UNIT_TEST, TOPIC_VIEW, ROWS)


# --- the macros, rendered -------------------------------------------------------------

MACROS = Path(__file__).resolve().parents[3] / "dbt" / "include" / "jammi" / "macros"
FILES = (
    "model_helpers/tenant.sql",
    "model_helpers/topic_events.sql",
    "model_helpers/topic_replay.sql",
)


class _MacroAdapter(_FixtureAdapter):
    """What the topic macros may call in a unit test; any other adapter method (the
    registry, offsets, topic_consumers) fails the test."""

    def __init__(self, tenant: Optional[str] = None) -> None:
        super().__init__(UNIT_TEST["unique_id"], described_view())
        self.tenant = tenant

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a unit test called adapter.{name}")

    def topic_events_read(self, *args: Any) -> dict:
        """The adapter's own: in a unit test it reads only the fixture."""
        return JammiAdapter.topic_events_read(self, *args)  # type: ignore[arg-type]

    def bound_tenant(self, override: Any = None) -> Optional[str]:
        return override if override is not None else self.tenant

    def tenant_scoped_sql(self, relation: Any, tenant: Optional[str]) -> str:
        return scoped_relation_sql(str(relation), tenant)

    def sql_string(self, value: Any) -> str:
        return sql_string_literal(str(value))

    def dispatch(self, name: str, package: Optional[str] = None) -> Any:
        return ENV_GLOBALS[f"default__{name}"]


ENV_GLOBALS: dict[str, Any] = {}


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> Any:
    raise _Return(value)


class _Context(jinja2.runtime.Context):
    """dbt's `return()`: the macro being called stops and returns the value."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        if __obj is _return:
            return _return(*args)
        try:
            return super().call(__obj, *args, **kwargs)
        except _Return as returned:
            if isinstance(__obj, jinja2.runtime.Macro):
                return returned.value
            raise


def render(macro: str, *args: Any, model: dict, execute: bool = True, **kwargs: Any):
    """Render one macro of FILES with the dbt context members the topic macros use."""
    adapter = kwargs.pop("adapter", None) or _MacroAdapter()
    configs: list[dict] = []
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"]
    )
    env.context_class = _Context

    def fail(name: str):
        def call(*_: Any, **__: Any) -> Any:
            raise AssertionError(f"a unit test called {name}()")

        return call

    env.globals.update(
        adapter=adapter,
        model=model,
        execute=execute,
        var=lambda name, default=None: kwargs.get("vars", {}).get(name, default),
        config=lambda **c: configs.append(c) or "",
        topic_require_registration=fail("topic_require_registration"),
        **{"return": _return},
    )
    for path in FILES:
        module = env.get_template(path, globals={}).make_module()
        macros = {k: v for k, v in vars(module).items() if isinstance(v, jinja2.runtime.Macro)}
        env.globals.update(macros)
    ENV_GLOBALS.clear()
    ENV_GLOBALS.update(env.globals)
    try:
        result = env.globals[macro](*args)
    except _Return as returned:
        result = returned.value
    return " ".join(str(result).split()), configs, adapter


def test_topic_events_in_a_unit_test_reads_the_fixture_only():
    sql, configs, adapter = render("topic_events", FIXTURE, model=UNIT_TEST)
    assert sql == "(select * from __dbt__cte__cdc_orders)"
    assert configs == []  # no topic_commit_consumed post-hook
    assert adapter._fixture_reads.take(UNIT_TEST["unique_id"], "cdc_orders")[0] == EVENTS


def test_topic_events_where_and_tenant_apply_to_the_fixture():
    sql, _, _ = render(
        "topic_events",
        FIXTURE,
        "op = 'd'",
        model=UNIT_TEST,
        vars={"jammi_tenant": "acme"},
    )
    assert sql == (
        "(select * from (select * from __dbt__cte__cdc_orders where "
        "(event_tenant_id = 'acme' or event_tenant_id is null)) where (op = 'd'))"
    )


def test_topic_events_predicate_is_still_validated_in_a_unit_test():
    with pytest.raises(JammiValidationError, match="where"):
        render("topic_events", FIXTURE, "op = 'd'; drop table x", model=UNIT_TEST)


def test_parsing_a_unit_test_adds_no_consumer_post_hook():
    sql, configs, _ = render("topic_events", FIXTURE, model=UNIT_TEST, execute=False)
    assert configs == []
    sql, configs, _ = render("topic_events", TOPIC_VIEW, model=MODEL, execute=False)
    assert configs == [{"post_hook": ["{{ topic_commit_consumed() }}"]}]


def test_topic_range_and_backing_table_in_a_unit_test_read_the_fixture_rows():
    sql, _, adapter = render("topic_range", FIXTURE, 2, 3, model=UNIT_TEST)
    assert sql == "(select * from __dbt__cte__cdc_orders where _offset >= 2 and _offset <= 3)"
    assert adapter._fixture_reads.take(UNIT_TEST["unique_id"], "cdc_orders")[0] == ROWS
    sql, _, _ = render(
        "topic_backing_table", FIXTURE, model=UNIT_TEST, vars={"jammi_tenant": "acme"}
    )
    assert sql == (
        "(select * from __dbt__cte__cdc_orders where (tenant_id = 'acme' or tenant_id is null))"
    )


def test_tenant_scoped_in_a_unit_test_scopes_the_fixture():
    sql, _, adapter = render(
        "tenant_scoped", FIXTURE, model=UNIT_TEST, vars={"jammi_tenant": "acme"}
    )
    assert sql == (
        "(select * from __dbt__cte__cdc_orders where (tenant_id = 'acme' or tenant_id is null))"
    )
    assert adapter._fixture_reads.take(UNIT_TEST["unique_id"], "cdc_orders")[0] == RELATION


def test_reading_one_fixture_as_events_and_as_rows_fails_the_unit_test():
    adapter = _MacroAdapter()
    render("topic_events", FIXTURE, model=UNIT_TEST, adapter=adapter)
    with pytest.raises(JammiValidationError, match="cannot stand for both"):
        render("topic_backing_table", FIXTURE, model=UNIT_TEST, adapter=adapter)
