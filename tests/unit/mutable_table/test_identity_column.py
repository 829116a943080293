"""identity_column (mutable_table/rules/identity.py, identity.sql): every rule with a
passing and a failing case, what the definition records and stores, what the planner
and the appliers render, and how the high-water mark is read back."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.engine.describe import delta_history_entry
from dbt.adapters.jammi.mutable_table.commit.merge_commit import commit_merge, merges_batch
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.definition_change import check_definition_change
from dbt.adapters.jammi.mutable_table.rules import identity, identity_phases
from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema
from dbt.adapters.jammi.mutable_table.table_properties import RECORDED_KEYS
from tests.unit.mutable_table.test_mutable_render import render
from tests.unit.rejections import rejects

ORDERS = {"order_id": "string", "amount": "bigint", "v": "bigint", "org": "string"}


def build(schema=None, **config):
    config.setdefault("primary_key", ["order_id"])
    config.setdefault("identity_column", "order_no")
    return MutableTableDefinition.from_config("orders", schema or ORDERS, config)


# --- the definition ----------------------------------------------------------------


def test_an_absent_identity_column_is_stored_as_bigint_after_the_models_columns():
    definition = build()
    assert definition.identity_column == "order_no"
    assert [c.name for c in definition.columns] == list(ORDERS)
    assert (definition.storage_columns[-1].name, definition.storage_columns[-1].type) == (
        "order_no",
        "bigint",
    )
    assert "order_no" not in definition.value_columns  # never compared with the batch
    assert definition.to_dict()["identity_column"] == "order_no"


def test_an_output_identity_column_keeps_its_place_and_is_stored_as_bigint():
    definition = build({**ORDERS, "order_no": "int"})
    assert [(c.name, c.type) for c in definition.columns][-1] == ("order_no", "bigint")
    assert [c.name for c in definition.storage_columns].count("order_no") == 1


def test_unset_identity_leaves_the_recorded_definition_as_before():
    recorded = build(identity_column=None).to_dict()
    assert "identity_column" not in recorded
    assert not {"identity_from", "identity_guard"} & RECORDED_KEYS


@pytest.mark.parametrize(
    ("config", "fragments"),
    [
        ({"identity_column": "order_id"}, ["'order_id' is also a primary_key column"]),
        ({"identity_column": "v", "version_column": "v"}, ["'v' is also a version_column"]),
        (
            {"identity_column": "org", "tenant_from": "org"},
            ["'org' is also the tenant_from column"],
        ),
        (
            {"identity_column": "amount", "merge_functions": {"amount": "max"}},
            ["'amount' is also a merge_functions column"],
        ),
        (
            {"identity_column": "v", "ttl_ms": 1000, "ttl_column": "v"},
            ["'v' is also the ttl_column"],
        ),
        ({"history": "scd2"}, ["with history: scd2", "keep history: none"]),
        ({"identity_column": ["a", "b"]}, ["at most one identity column"]),
        ({"identity_column": "_no"}, ["reserved", "_no"]),
        ({"identity_column": "org"}, ["output with type string", "leave 'org' out"]),
    ],
)
def test_identity_column_rules(config, fragments):
    rejects(lambda: build(**config), "mutable_table 'orders'", *fragments)


def test_the_identity_column_cannot_be_added_or_removed_on_an_existing_table():
    stored = build(identity_column=None).to_dict()
    with pytest.raises(JammiValidationError, match="identity_column 'order_no' is set"):
        check_definition_change("orders", stored, build().to_dict(), list(ORDERS))
    with pytest.raises(JammiValidationError, match="identity_column 'order_no' is removed"):
        check_definition_change("orders", build().to_dict(), stored, list(ORDERS))
    check_definition_change("orders", build().to_dict(), build().to_dict(), list(ORDERS))


def test_an_absent_identity_column_is_the_engines_on_an_existing_table():
    stored_columns = [*ORDERS.items(), ("order_no", "bigint")]
    result = reconcile_schema("orders", build().to_dict(), stored_columns)
    assert result.missing_columns == [] and result.new_columns == []
    assert result.definition["storage_columns"][-1] == ["order_no", "bigint"]
    assert "order_no" not in [c[0] for c in result.definition["columns"]]


# --- what the planner and the rewrite applier render ----------------------------------


def planned(schema=None, **run_only):
    definition = build(schema).to_dict()
    definition.update(run_only)
    return " ".join(
        render("get_change_set_sql", definition, "orders__jammi_batch", "analytics.orders").split()
    )


def test_inserts_are_numbered_from_the_mark_in_key_order_and_updates_keep_the_number():
    sql = planned(identity_from=41)
    numbered = (
        "cast(41 + row_number() over (partition by change_kind order by s_tenant_id, "
        "s_order_id) as bigint)"
    )
    assert f"when 'insert' then {numbered}" in sql
    # the batch's value never reaches the table: an update keeps the stored number
    assert "else t_order_no end as `order_no`" in sql
    assert "<=> t_order_no" not in sql  # not a value the batch can change
    assert "jammi-identity-moved" not in sql


def test_an_output_identity_value_is_ignored_and_never_makes_an_update():
    sql = planned({**ORDERS, "order_no": "bigint"}, identity_from=0)
    assert "t_order_no <=> t_order_no" in sql  # a re-sent row stays a no-op
    assert "then s_order_no" not in sql


def test_a_merge_plan_stops_when_another_run_stored_numbers_above_its_start():
    sql = planned(identity_from=7, identity_guard=True)
    assert (
        "case when (select coalesce(max(`order_no`), 0) from analytics.orders) > 7 then "
        "cast(raise_error('jammi-identity-moved: another run stored numbers above 7') as "
        "bigint)"
    ) in sql


def test_the_rewrite_mark_is_written_inside_the_version_directory():
    sql = " ".join(
        identity_phases.mark_write_sql(
            build().to_dict(), "orders__jammi_changes_r1", "/w/orders/v0000000003_r1", 12
        ).split()
    )
    assert sql == (
        "insert overwrite directory '/w/orders/v0000000003_r1/_jammi_identity' using parquet "
        "select greatest(cast(12 as bigint), coalesce(max(`order_no`), 0)) as high_water "
        "from orders__jammi_changes_r1 where _change in ('insert', 'update')"
    )


def test_identity_tables_merge_a_planned_change_set():
    assert merges_batch(build(identity_column=None).to_dict())
    assert not merges_batch(build().to_dict())


# --- the mark read back, the Delta commit's record ------------------------------------


def history(version, operation, metadata, inserted):
    metrics = {"numTargetRowsInserted": str(inserted)}
    return (version, None, None, None, operation, {}, None, None, None, None, None, None,
            metrics, metadata)  # fmt: skip


def test_the_delta_mark_is_the_newest_numbering_merge_start_plus_its_inserts():
    tag = "jammi:invocation_id=abc"
    rows = [
        history(5, "OPTIMIZE", tag, 0),
        history(4, "MERGE", identity.commit_metadata(tag, 10), 3),
        history(3, "MERGE", tag, 9),  # expire_mutable_table: no numbering
        history(2, "MERGE", identity.commit_metadata(tag, 2), 8),
    ]
    assert identity.delta_high_water([delta_history_entry(r) for r in rows]) == 13
    assert identity.delta_high_water([delta_history_entry(rows[0])]) is None


def test_history_metrics_arrive_as_text_over_thrift():
    row = list(history(1, "MERGE", "t" + identity.COMMIT_MARK + "4", 0))
    row[12] = json.dumps({"numTargetRowsInserted": "2"})
    assert identity.delta_high_water([delta_history_entry(row)]) == 6


def test_the_commit_tag_reads_back_without_the_mark():
    tagged = identity.commit_metadata("jammi:invocation_id=abc", 9)
    assert ";" not in tagged  # Spark's SET stops a value at ';'
    assert identity.commit_tag(tagged) == "jammi:invocation_id=abc"
    assert identity.commit_metadata("x", None) == "x"


def test_numbering_starts_above_every_known_mark():
    assert identity.identity_from(None, None) == 0
    assert identity.identity_from(3, None, "7") == 7


def test_a_merge_stopped_by_the_identity_guard_re_plans():
    def run_sql(sql):
        raise RuntimeError(f"[USER_RAISED_EXCEPTION] {identity.IDENTITY_MOVED_MARKER}: above 3")

    assert commit_merge(run_sql, "merge into t ...", "orders", last_attempt=False) is None


# --- the rules' read of the mark (rules/rules_service.py) ---------------------------------


class FakeStatements:
    """Answers the mark reads like Spark: a version without a mark has no directory."""

    def __init__(self, stored_max, version_mark=None, history_rows=()):
        self.stored_max, self.version_mark, self.history_rows = (
            stored_max,
            version_mark,
            history_rows,
        )
        self.ran: list[str] = []

    def __call__(self, sql):
        self.ran.append(sql)
        if sql.startswith("select max(`"):
            return [(self.stored_max,)]
        if identity.MARK_DIR in sql:
            if self.version_mark is None:
                raise RuntimeError(
                    "[PATH_NOT_FOUND] Path does not exist: file:/w/v1/_jammi_identity"
                )
            return [(self.version_mark,)]
        if sql.startswith("describe history"):
            return list(self.history_rows)
        raise AssertionError(sql)


def adapter_with(statements):
    """The row rules' service over the recorded statements."""
    from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService

    return RulesService(SimpleNamespace(rows=statements), None, None)  # type: ignore[arg-type]


def test_a_rewrite_plan_numbers_above_the_versions_mark_and_the_stored_rows():
    defn = build().to_dict()
    read = adapter_with(FakeStatements(stored_max=4, version_mark=9))
    assert read.identity_from(defn, "s.orders", "parquet", "/w/v1") == 9
    unmarked = adapter_with(FakeStatements(stored_max=4))
    assert unmarked.identity_from(defn, "s.orders", "orc", "/w/v1") == 4
    assert read.identity_from(defn, None, "parquet", None) == 0
    assert read.identity_from(build(identity_column=None).to_dict(), "t", "x") is None


def test_a_delta_plan_reads_the_mark_from_the_history():
    tag = "jammi:invocation_id=abc"
    rows = [history(7, "MERGE", identity.commit_metadata(tag, 20), 2)]
    statements = FakeStatements(stored_max=3, history_rows=rows)
    assert adapter_with(statements).identity_from(build().to_dict(), "s.o", "delta") == 22
    assert statements.ran[-1] == "describe history s.o limit 100"


CREATED_UNDER_THE_READ = (
    "Error running query: java.lang.RuntimeException: java.lang.InstantiationException "
    "at org.apache.hadoop.util.ReflectionUtils.newInstance"
)


class MarkReads:
    """run_sql for iceberg_mark: raises the given errors in turn, then answers."""

    def __init__(self, *errors):
        self.errors, self.reads, self.pauses = list(errors), 0, []

    def __call__(self, sql):
        assert sql.startswith("select max(high_water) from s.t__jammi_identity where _tag in (")
        self.reads += 1
        if self.errors:
            raise RuntimeError(self.errors.pop(0))
        return [(41,)]


def test_iceberg_mark_reads_again_after_meeting_the_mark_tables_creation():
    """A concurrent run creating the mark table under the read: read again, then the mark."""
    reads = MarkReads(CREATED_UNDER_THE_READ)
    assert identity_phases.iceberg_mark(reads, "s.t", reads.pauses.append) == 41
    assert (reads.reads, reads.pauses) == (2, [0.5])


def test_iceberg_mark_gives_up_after_its_attempts_and_passes_other_errors():
    reads = MarkReads(*[CREATED_UNDER_THE_READ] * identity_phases.MARK_READ_ATTEMPTS)
    with pytest.raises(RuntimeError, match="InstantiationException"):
        identity_phases.iceberg_mark(reads, "s.t", reads.pauses.append)
    assert reads.reads == identity_phases.MARK_READ_ATTEMPTS
    other = MarkReads("AnalysisException: something else")
    with pytest.raises(RuntimeError, match="something else"):
        identity_phases.iceberg_mark(other, "s.t", other.pauses.append)
    assert other.reads == 1
    missing = MarkReads("[TABLE_OR_VIEW_NOT_FOUND] s.t__jammi_identity")
    assert identity_phases.iceberg_mark(missing, "s.t", missing.pauses.append) is None
