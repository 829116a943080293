"""changelog: true -- validation, the event columns, offsets, the exactly-once attach and
the Delta publish retry, and the rendered event SQL (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_sql

ACCOUNTS = {"id": "bigint", "name": "string", "amount": "double"}


def definition(schema: dict = ACCOUNTS, **config: Any) -> dict:
    config.setdefault("primary_key", ["id"])
    return MutableTableDefinition.from_config("accounts", schema, config).to_dict()


# --- validation -----------------------------------------------------------------


def test_changelog_is_recorded_only_when_on():
    assert "changelog" not in definition()
    assert "changelog" not in definition(changelog=False)
    assert definition(changelog=True)["changelog"] is True


@pytest.mark.parametrize(
    "config, message",
    [
        ({"changelog": "yes"}, "changelog"),
        ({"changelog": True, "full_refresh": True}, "cannot be combined with full_refresh"),
    ],
)
def test_bad_configs_are_refused_with_a_fix(config, message):
    with pytest.raises(JammiValidationError) as raised:
        definition(**config)
    assert message in str(raised.value)
    assert "Fix:" in str(raised.value)


@pytest.mark.parametrize("column", ["change_kind", "table_version", "previous_name"])
def test_event_column_names_may_not_clash_with_the_models(column):
    with pytest.raises(JammiValidationError) as raised:
        definition({**ACCOUNTS, column: "string"}, changelog=True)
    assert f"column '{column}' is also a column of the changelog events" in str(raised.value)
    # the same column is fine without a changelog
    assert column in [c[0] for c in definition({**ACCOUNTS, column: "string"})["columns"]]


# --- event columns, names, offsets ------------------------------------------------


def test_event_columns_carry_new_and_previous_values():
    assert changelog.event_columns(definition(changelog=True)) == [
        ["change_kind", "string"],
        ["table_version", "bigint"],
        ["id", "bigint"],
        ["name", "string"],
        ["amount", "double"],
        ["previous_name", "string"],
        ["previous_amount", "double"],
    ]


def test_scd2_events_key_by_valid_from_and_carry_valid_to():
    defn = definition({"id": "bigint", "label": "string"}, history="scd2", changelog=True)
    assert [c[0] for c in changelog.event_columns(defn)] == [
        "change_kind",
        "table_version",
        "id",
        "label",
        "valid_from",
        "valid_to",
        "previous_label",
        "previous_valid_to",
    ]
    sources = {s["name"]: s["source"] for s in changelog.event_sources(defn)}
    assert sources["valid_from"] == "key" and sources["previous_valid_to"] == "before"


def test_the_engine_written_time_stays_internal():
    defn = definition(ttl_ms=1000, changelog=True)
    assert "_written_at" in [c[0] for c in defn["storage_columns"]]
    assert not any("_written_at" in c[0] for c in changelog.event_columns(defn))
    assert changelog.value_columns(defn) == ["name", "amount"]


def test_topic_name_offsets_and_staging():
    assert changelog.topic_name("orders_state") == "orders.state.changes"
    assert changelog.topic_name("accounts") == "accounts.changes"
    # the first version a new table publishes: delta versions start at 0
    assert changelog.first_version_of_new_table("delta") == 0
    assert changelog.first_version_of_new_table("parquet") == 1
    assert (
        changelog.staged_dir("file:/wh/s.db/__topic_x/", "file:/wh/s.db/accounts/v0000000007_ab12")
        == "file:/wh/s.db/__topic_x/_staging/changes_v0000000007_ab12"
    )
    assert changelog.first_version({"jammi.changelog_since": "3"}) == 3
    assert changelog.first_version({}) is None


# --- exactly once -----------------------------------------------------------------


class _Engine:
    """run_sql double: fails the first ``errors`` statements with the given messages."""

    def __init__(self, *errors: str) -> None:
        self.errors = list(errors)
        self.statements: list[str] = []

    def __call__(self, sql: str):
        self.statements.append(sql)
        if self.errors:
            raise RuntimeError(self.errors.pop(0))
        return []


def test_attach_is_once_per_offset():
    engine = _Engine()
    assert changelog.attach_version(engine, "s.__topic_x", 4, "/t/_staging/changes_v4")
    assert engine.statements == [
        "alter table s.__topic_x add partition (_offset=4) "
        f"location {sql_string_literal('/t/_staging/changes_v4')}"
    ]
    # the run that committed it, or another run's repair, got there first
    assert not changelog.attach_version(
        _Engine("[PARTITIONS_ALREADY_EXIST] partition _offset=4 already exists"), "t", 4, "/p"
    )
    with pytest.raises(RuntimeError, match="permission denied"):
        changelog.attach_version(_Engine("permission denied"), "t", 4, "/p")


def test_delta_publish_retries_concurrent_publishes_only(monkeypatch):
    monkeypatch.setattr(changelog.time, "sleep", lambda _: None)
    engine = _Engine("ConcurrentAppendException: files were added")
    changelog.publish_delta(engine, "insert into t select 1", "mutable_table 'accounts'")
    assert engine.statements == ["insert into t select 1"] * 2

    with pytest.raises(changelog.ChangelogPublishError) as raised:
        changelog.publish_delta(
            _Engine(*["ConcurrentAppendException"] * 3), "insert", "mutable_table 'a'", 3
        )
    assert "the next run publishes its changes" in str(raised.value)
    with pytest.raises(RuntimeError, match="syntax"):
        changelog.publish_delta(_Engine("syntax error"), "insert", "mutable_table 'a'")


# --- rendered event SQL -----------------------------------------------------------


def _flat(sql: str) -> str:
    return " ".join(sql.split())


def test_events_pair_images_per_key_and_version():
    sql = _flat(changelog_sql.events_sql(definition(changelog=True), "select * from raw"))
    assert (
        "case when before is null then 'insert' when after is null then 'delete' "
        "else 'update' end as change_kind"
    ) in sql
    assert "cast(`id` as bigint) as `id`" in sql
    assert "cast(after.`name` as string) as `name`" in sql
    assert "cast(before.`amount` as double) as `previous_amount`" in sql
    image = "named_struct('_present', true, 'name', `name`, 'amount', `amount`)"
    assert (
        f"first(if(_change_type in ('insert', 'update_postimage'), {image}, null), true) as after"
    ) in sql
    assert (
        f"first(if(_change_type in ('update_preimage', 'delete'), {image}, null), true) as before"
    ) in sql
    assert sql.endswith("group by _commit_version, tenant_id, `id` ) as paired")


def test_scd2_events_open_and_close():
    defn = definition({"id": "bigint", "label": "string"}, history="scd2", changelog=True)
    sql = _flat(changelog_sql.events_sql(defn, "select * from raw"))
    assert "then 'open' when after is null then 'delete' else 'close' end" in sql
    assert "group by _commit_version, tenant_id, `id`, `valid_from`" in sql


def test_delta_publish_appends_only_versions_above_the_high_water_mark():
    sql = _flat(
        changelog_sql.delta_publish_sql(
            definition(changelog=True),
            "s.__topic_x",
            "select * from table_changes('`s`.`accounts`', 3, 5)",
        )
    )
    assert sql.startswith("insert into s.__topic_x select cast(table_version + 1 as bigint)")
    assert "row_number() over (partition by table_version order by tenant_id, `id`) - 1" in sql
    assert sql.endswith(
        "where table_version + 1 > (select coalesce(max(_offset), 0) from s.__topic_x)"
    )
