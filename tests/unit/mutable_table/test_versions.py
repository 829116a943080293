"""Kept versions (mutable_table/versions/kept_versions.py), reads of the past
(mutable_table/versions/version_reads.py) and what rollback_mutable_table refuses before
it reads (operations/versions.sql), without Spark."""

from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.commit import ownership
from dbt.adapters.jammi.mutable_table.run_config import run_definition
from dbt.adapters.jammi.mutable_table.versions import kept_versions, version_reads
from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql
from tests.unit.rejections import rejects

MACROS = Path(__file__).resolve().parents[3] / "dbt" / "include" / "jammi" / "macros"

BASE = "file:/w/s.db/orders"
NOW = 10_000_000_000
REMOTE = "otherhost:1:thrift"


def loc(version: int, run: str = "r") -> str:
    return f"{BASE}/v{version:010d}_{run}{version}"


def record(version, run="r", parent=None, written_ms=NOW, holder=REMOTE, kind="run"):
    return kept_versions.VersionRecord(
        version=version,
        location=loc(version, run),
        parent=parent,
        written_ms=written_ms,
        inserts=version,
        updates=0,
        deletes=0,
        invocation_id=f"inv{version}",
        kind=kind,
        holder=holder,
    )


def chain(n: int) -> list[kept_versions.VersionRecord]:
    return [record(v, parent=loc(v - 1) if v > 1 else None) for v in range(1, n + 1)]


@pytest.mark.parametrize("value", ["3", 2.5, True, [3]])
def test_versions_kept_rejects_other_types(value):
    with pytest.raises(JammiValidationError) as info:
        kept_versions.validate_versions_kept(value, "mutable_table 'orders'")
    message = str(info.value)
    assert "orders" in message and "versions_kept" in message and "versions_kept: 3" in message


@pytest.mark.parametrize("value", [0, -1, kept_versions.MAX_VERSIONS_KEPT + 1])
def test_versions_kept_range(value):
    with pytest.raises(JammiValidationError, match="between 1 and"):
        kept_versions.validate_versions_kept(value, "mutable_table 'orders'")


def test_versions_kept_is_validated_with_the_runs_definition():
    # the run's call (run_config.run_definition) with the model of
    # tests/functional/mutable_table/test_versions.py (bad_kept)
    rejects(
        lambda: run_definition(
            "bad_kept", [("id", "int")], {"primary_key": ["id"], "versions_kept": "all"}
        ),
        "mutable_table 'bad_kept'",
        "'versions_kept' must be a whole number, got 'all'",
    )


def test_versions_kept_default_and_value():
    assert (
        kept_versions.validate_versions_kept(None, "m") == kept_versions.DEFAULT_VERSIONS_KEPT == 3
    )
    assert kept_versions.validate_versions_kept(7, "m") == 7


def test_log_location_is_hidden_beside_the_versions():
    assert kept_versions.log_location(loc(4)) == f"{BASE}/_jammi_versions/v0000000004_r4"
    assert kept_versions.log_glob(BASE + "/") == f"{BASE}/_jammi_versions/v*"


def test_write_log_sql_escapes_and_counts():
    sql = kept_versions.write_log_sql(
        loc(2), loc(1), 5, {"insert": 1, "update": 2, "delete": 3}, "inv'x", "run", "h:1:s"
    )
    assert sql.startswith(f"insert overwrite directory '{BASE}/_jammi_versions/v0000000002_r2'")
    assert "'inv\\'x' as invocation_id" in sql
    assert "cast(2 as bigint) as updates" in sql and "cast(3 as bigint) as deletes" in sql
    with pytest.raises(run_errors.MutableRunError):
        kept_versions.write_log_sql(BASE + "/elsewhere", None, 5, {}, "i", "run", "h")


def test_parse_log_rows_round_trip():
    row = [4, loc(4), loc(3), 7, 1, 2, 3, "inv", "rollback", "h:1:s"]
    (parsed,) = kept_versions.parse_log_rows([row, [None, "x", None, 0, 0, 0, 0, "", "", ""]])
    assert parsed.version == 4 and parsed.parent == loc(3) and parsed.kind == "rollback"


def test_committed_chain_follows_parents_not_numbers():
    loser = record(3, run="loser", parent=loc(2))
    records = [*chain(4), loser]
    assert kept_versions.committed_chain(records, loc(4)) == [loc(4), loc(3), loc(2), loc(1)]


def test_plan_removal_over_sql_keeps_the_newest_and_removes_older_with_their_logs():
    records = chain(5)
    removed = kept_versions.plan_removal(loc(5), 3, records, None, True, NOW)
    assert removed == [
        loc(1),
        kept_versions.log_location(loc(1)),
        loc(2),
        kept_versions.log_location(loc(2)),
    ]


def test_plan_removal_over_sql_waits_for_remote_leftovers_to_age():
    fresh = record(6, run="crashed", parent=loc(5), written_ms=NOW - 1000)
    old = record(
        6, run="ancient", parent=loc(5), written_ms=NOW - kept_versions.LEFTOVER_MAX_AGE_MS - 1
    )
    removed = kept_versions.plan_removal(loc(5), 5, [*chain(5), fresh, old], None, True, NOW)
    assert removed == [old.location, kept_versions.log_location(old.location)]


def test_plan_removal_over_sql_removes_leftovers_of_dead_local_sessions():
    dead = ownership.Holder(ownership.this_holder("session").host, 2**22 + 12345, "session")
    crashed = record(6, run="dead", parent=loc(5), holder=dead.render())
    removed = kept_versions.plan_removal(loc(5), 5, [*chain(5), crashed], None, False, NOW)
    assert removed == [crashed.location, kept_versions.log_location(crashed.location)]


def test_plan_removal_with_a_listing_follows_the_commit_protocol():
    records = chain(3)
    listed = [
        loc(1),
        loc(2),
        loc(3),
        loc(3, "loser"),
        loc(4, "inflight"),
        BASE + "/_jammi_versions",
    ]
    # a committed run removes everything but the kept versions
    assert kept_versions.plan_removal(loc(3), 2, records, listed, True, NOW) == [
        loc(1),
        kept_versions.log_location(loc(1)),
        loc(3, "loser"),
        loc(4, "inflight"),
    ]
    # a run that committed nothing keeps what may be a run in progress
    assert loc(4, "inflight") not in kept_versions.plan_removal(
        loc(3), 2, records, listed, False, NOW
    )


def test_plan_removal_never_removes_kept_or_current():
    for kept in range(1, 6):
        removed = kept_versions.plan_removal(loc(5), kept, chain(5), None, True, NOW)
        assert loc(5) not in removed
        assert len([p for p in removed if "_jammi_versions" not in p]) == 5 - kept


def test_history_and_kept_location():
    rows = kept_versions.history_rows(chain(5), loc(5), 3)
    assert [r["version"] for r in rows] == [5, 4, 3]
    assert [r["current"] for r in rows] == [True, False, False]
    assert rows[1]["invocation_id"] == "inv4" and rows[1]["inserts"] == 4
    assert kept_versions.kept_location("orders", chain(5), loc(5), 3, 4) == loc(4)
    with pytest.raises(run_errors.MutableRunError, match="version 2 is not kept .*5, 4, 3"):
        kept_versions.kept_location("orders", chain(5), loc(5), 3, 2)


def test_a_removed_version_is_not_kept_even_if_versions_kept_grows():
    records = chain(5)[2:]  # the log rows of 1 and 2 were removed with their versions
    assert [r["version"] for r in kept_versions.history_rows(records, loc(5), 10)] == [5, 4, 3]


def test_as_of_is_scoped_exactly_like_tenant_scoped():
    source = version_reads.path_relation_sql("parquet", loc(4))
    assert version_reads.as_of_sql(source, "acme") == scoped_relation_sql(source, "acme")
    assert version_reads.as_of_sql(source, None) == f"(select * from {source})"
    delta = version_reads.delta_as_of_source("s.orders", 12, None)
    assert delta == "s.orders version as of 12"
    assert "timestamp as of '2026-01-01'" in version_reads.delta_as_of_source(
        "t", None, "2026-01-01"
    )
    with pytest.raises(run_errors.MutableRunError):
        version_reads.path_relation_sql("parquet", "/x`; drop")


def test_version_at_picks_the_version_current_at_a_time():
    history = [{"version": v, "committed_ms": v * 100} for v in (5, 4, 3)]
    assert version_reads.version_at(history, 450, "s") == 4
    assert version_reads.version_at(history, 10_000, "s") == 5
    with pytest.raises(run_errors.MutableRunError, match="no kept version was current"):
        version_reads.version_at(history, 299, "s")


@pytest.mark.parametrize("value", ["12", -1, True, 1.5])
def test_require_version(value):
    with pytest.raises(run_errors.MutableRunError, match="whole number"):
        version_reads.require_version(value, "s")


def test_aligned_select_fills_columns_the_old_version_lacked():
    sql = version_reads.aligned_select_sql(
        [["id", "int"], ["note", "string"]], ["id", "tenant_id"], "src"
    )
    assert sql == (
        "select cast(`id` as int) as `id`, cast(null as string) as `note`, tenant_id from src"
    )


def test_rollback_change_set_and_merge_sql():
    change_set = version_reads.rollback_change_set_sql(["id", "v"], ["id"], "select 1", "select 2")
    assert "full outer join (select 2) as t on c.`tenant_id` <=> t.`tenant_id`" in change_set
    assert "when t.`id` is null then 'delete'" in change_set
    assert "c.`v` as _jammi_prev_1" in change_set
    assert change_set.endswith("where c.`id` is null or t.`id` is null or not (c.`v` <=> t.`v`)")
    merge = version_reads.rollback_merge_sql("s.t", ["id"], ["id", "v"], "select 2")
    assert merge.startswith("merge into s.t as t using (select 2) as s on ")
    assert "when matched and not (t.`v` <=> s.`v`) then update set t.`v` = s.`v`" in merge
    assert merge.endswith("when not matched by source then delete")


def delta_history_row(version: int, operation: str, metrics: dict, metadata=None) -> tuple:
    """A row of DESCRIBE HISTORY: version, operation, operationMetrics and userMetadata
    in their columns, everything else empty."""
    return (version, None, None, None, operation, {}, *[None] * 6, metrics, metadata, None)


def test_delta_history_rows_counts_and_invocation():
    merged = {
        "numTargetRowsInserted": "1",
        "numTargetRowsUpdated": "2",
        "numTargetRowsDeleted": "3",
    }
    rows = [
        delta_history_row(
            0, "CREATE TABLE AS SELECT", {"numOutputRows": "2"}, "jammi:invocation_id=a"
        ),
        delta_history_row(1, "MERGE", merged, "jammi:invocation_id=b"),
        delta_history_row(2, "SET TBLPROPERTIES", {}),
    ]
    history = version_reads.delta_history_rows(rows, 2)
    assert [h["version"] for h in history] == [2, 1]
    assert history[1]["inserts"] == 1 and history[1]["deletes"] == 3
    assert history[1]["invocation_id"] == "b" and history[0]["current"]
    version_reads.require_kept_delta_version(history, 1, "s")
    with pytest.raises(run_errors.MutableRunError, match="version 0 is not kept"):
        version_reads.require_kept_delta_version(history, 0, "s")


def test_delta_history_times_from_values_and_text():
    assert version_reads.commit_millis("1970-01-01 00:00:01.5") == 1500
    assert version_reads.commit_millis("not a time") is None
    assert version_reads.commit_millis(None) is None


# --- rollback_mutable_table's refusals (operations/versions.sql), before any read -------


class CompilerError(Exception):
    """dbt's exceptions.raise_compiler_error."""


class Read(Exception):
    """The macro got past its refusals to its first read of the table."""


def rollback(model: str, tenant=None, materialized: str = "mutable_table") -> None:
    """Render rollback_mutable_table as `dbt run-operation` would, in a project whose one
    model is ``model``; its first read of the table raises Read."""

    def raise_compiler_error(message):
        raise CompilerError(message)

    def load_relation(relation):
        raise Read(relation)

    node = {"resource_type": "model", "name": model, "config": {"materialized": materialized}}
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"]
    )
    context = {
        "graph": {"nodes": {f"model.test.{model}": node}},
        "jammi_bound_tenant": lambda: tenant,
        "exceptions": SimpleNamespace(raise_compiler_error=raise_compiler_error),
        "api": SimpleNamespace(Relation=SimpleNamespace(create=lambda **parts: parts)),
        "load_relation": load_relation,
    }
    module = env.get_template("operations/versions.sql").make_module(context)
    module.rollback_mutable_table(model, 1)


def test_rollback_of_a_mutable_table_gets_to_its_first_read():
    with pytest.raises(Read):
        rollback("orders")


def test_rollback_in_a_tenant_bound_run_is_refused():
    with pytest.raises(CompilerError) as info:
        rollback("orders", tenant="acme")
    message = str(info.value)
    assert "rollback_mutable_table 'orders': refused in a run bound to a tenant" in message
    assert "nothing was changed" in message and "Fix: run it unbound" in message


def test_rollback_of_a_model_that_keeps_no_versions_is_refused():
    with pytest.raises(CompilerError) as info:
        rollback("plain", materialized="table")
    message = str(info.value)
    assert "model 'plain' is materialized as table, not mutable_table" in message
    assert "Fix: name a mutable_table model" in message
