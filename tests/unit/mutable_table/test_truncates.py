"""``truncate_when`` (rules/truncates.py): what a definition refuses, what the rule turns
on in the other rules (deletes, tombstones), the batch a truncate becomes, and the run
report's count. Its effect on stored rows is tests/functional/mutable_table/test_truncates.py."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.run_report import mutable_run_response
from dbt.adapters.jammi.mutable_table.commit.merge_commit import change_counts
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.key_decisions import KeyDecisions
from dbt.adapters.jammi.mutable_table.rules import tombstones, truncates
from tests.unit.mutable_table.test_mutable_render import render

ITEMS = {"id": "int", "name": "string", "ver": "bigint", "op": "string", "org": "string"}
BATCH = [[name, kind] for name, kind in ITEMS.items()]


def definition(**config) -> dict:
    config.setdefault("primary_key", ["id"])
    config.setdefault("truncate_when", "op = 't'")
    return MutableTableDefinition.from_config("items", ITEMS, config).to_dict()


def refusal(**config) -> str:
    with pytest.raises(JammiValidationError) as raised:
        definition(**config)
    return str(raised.value)


def test_a_truncate_needs_a_version_column():
    message = refusal()
    assert "mutable_table 'items'" in message
    assert "'truncate_when' needs a version_column" in message
    assert "set version_column" in message


def test_a_truncate_is_refused_with_merge_functions():
    message = refusal(version_column="ver", merge_functions={"name": "max"})
    assert "cannot be combined with merge_functions" in message


@pytest.mark.parametrize(
    "predicate", ["op = 't'; drop table x", "op = 't' -- rest", "id in (select id from other)"]
)
def test_a_predicate_that_could_escape_is_refused(predicate):
    assert "truncate_when" in refusal(version_column="ver", truncate_when=predicate)


def test_the_rule_is_recorded_only_when_set():
    assert definition(version_column="ver")["truncate_when"] == "op = 't'"
    plain = MutableTableDefinition.from_config(
        "items", ITEMS, {"primary_key": ["id"], "version_column": "ver"}
    ).to_dict()
    assert "truncate_when" not in plain


def test_a_truncate_deletes_and_keeps_tombstones_without_delete_when():
    defn = definition(version_column="ver")
    decisions = KeyDecisions.of(defn, tombstones=True)
    assert decisions.deletes
    assert tombstones.retention_ms(defn) == tombstones.DEFAULT_RETENTION_MS
    # tombstone_retention is accepted for the truncate's deletes alone
    kept = definition(version_column="ver", tombstone_retention="30d")
    assert kept["tombstone_retention"] == 30 * 86_400_000


def test_the_stamped_batch_deletes_a_truncated_key():
    sql = render(
        "mutable_stamped_batch_sql",
        {**definition(version_column="ver"), "batch_columns": list(ITEMS)},
        "batch",
        None,
        "is_delete",
    )
    assert "_jammi_truncated as is_delete" in sql
    both = render(
        "mutable_stamped_batch_sql",
        {**definition(version_column="ver", delete_when="op = 'd'"), "batch_columns": list(ITEMS)},
        "batch",
        None,
        "is_delete",
    )
    assert "coalesce((op = 'd'), false) or _jammi_truncated as is_delete" in both


def test_the_truncated_batch_ends_the_scope_stored_keys_older_than_the_truncate():
    sql = truncates.truncated_batch_sql(
        definition(version_column="ver"), "(src)", BATCH, "analytics.items", None
    )
    newest = "(select max(cast(b.`ver` as bigint)) from _jammi_batch as b where b._jammi_truncates)"
    # the batch's rows after the truncate, the truncate rows left out
    assert f"and not coalesce(cast(b.`ver` as bigint) <= {newest}, false)" in sql
    assert "where not (b._jammi_truncates and not (b.`ver` is null))" in sql
    # one delete per ended key: stored keys of the shared scope older than it, and the
    # keys of the dropped batch rows; the rest of the row is the truncate's
    assert "from analytics.items as stored where stored.tenant_id is null" in sql
    assert f"coalesce(cast(stored.`ver` as bigint) < {newest}, true)" in sql
    assert "select k.`id`, tr.`name`, tr.`ver`, tr.`op`, tr.`org`, true as _jammi_truncated" in sql
    assert "order by cast(`ver` as bigint) desc" in sql


def test_a_first_run_reads_no_stored_rows_and_a_bound_run_its_tenant_only():
    first = truncates.truncated_batch_sql(
        definition(version_column="ver"), "(src)", BATCH, None, None
    )
    assert "stored" not in first
    bound = truncates.truncated_batch_sql(
        definition(version_column="ver", tenant_from="org"),
        "(src)",
        BATCH,
        "analytics.items",
        "acme",
    )
    assert "where stored.tenant_id = 'acme'" in bound
    assert "select k.`id`, tr.`name`" in bound


def test_an_unbound_tenant_from_run_ends_every_tenants_keys():
    sql = truncates.truncated_batch_sql(
        definition(version_column="ver", tenant_from="org"),
        "(src)",
        BATCH,
        "analytics.items",
        None,
    )
    # each ended key keeps its tenant: the stored tenant_id is the row's tenant_from
    assert "stored.tenant_id as `org`" in sql
    assert "where true and" in sql
    assert "k.`org`, true as _jammi_truncated" in sql


def test_a_two_column_version_compares_in_order():
    single = truncates.truncated_batch_sql(
        definition(version_column="ver"), "(src)", BATCH, None, None
    )
    assert "named_struct" not in single
    pairs = {"id": "int", "name": "string", "at": "bigint", "seq": "int", "op": "string"}
    defn = MutableTableDefinition.from_config(
        "pairs",
        pairs,
        {"primary_key": ["id"], "version_column": ["at", "seq"], "truncate_when": "op = 't'"},
    ).to_dict()
    paired = truncates.truncated_batch_sql(
        defn, "(src)", [[n, t] for n, t in pairs.items()], "analytics.pairs", None
    )
    assert (
        "named_struct('v0', cast(stored.`at` as bigint), 'v1', cast(stored.`seq` as int))" in paired
    )


def test_the_run_report_counts_the_truncates():
    response = mutable_run_response(change_counts(0, 0, 3), 7, None, 1)
    assert response.truncates == 1
    assert response.rows_deleted == 3
    assert response._message.endswith("(TRUNCATE 1)")
    assert mutable_run_response(change_counts(1, 0, 0), 7).truncates is None


def test_scd2_keeps_every_row_and_every_truncate_as_a_point_in_history():
    history = {
        "id": "int",
        "tier": "string",
        "ver": "bigint",
        "valid_from": "bigint",
        "op": "string",
    }
    defn = MutableTableDefinition.from_config(
        "items",
        history,
        {
            "primary_key": ["id"],
            "history": "scd2",
            "version_column": "ver",
            "truncate_when": "op = 't'",
        },
    ).to_dict()
    sql = truncates.truncated_batch_sql(
        defn, "(src)", [[n, t] for n, t in history.items()], "analytics.items", None
    )
    assert "_jammi_rn = 1" not in sql
    assert "<=" not in sql
    assert "from analytics.items as stored where stored.tenant_id is null and true" in sql
    # the delete carries the truncate's effective time
    assert (
        "select k.`id`, tr.`tier`, tr.`ver`, tr.`valid_from`, tr.`op`, true as _jammi_truncated"
        in sql
    )
    planner = render(
        "get_scd2_change_set_sql", {**defn, "batch_columns": list(history)}, "src", "t", None
    )
    assert "false or _jammi_truncated as _is_delete" in planner
