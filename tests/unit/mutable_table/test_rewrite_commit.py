"""The rewrite applier's compare-and-swap commit against a fake metastore.

The fake refuses to create a relation that exists, as the Hive metastore does. Each test
runs one committer and lets a second one run its whole commit at a chosen point inside
the first one's, which covers every interleaving of two runs that planned from the same
version: exactly one of them may ever commit.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common import clock
from dbt.adapters.jammi.mutable_table.commit import commit_service, rewrite_commit
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.commit.ownership import Holder, this_holder
from dbt.adapters.jammi.mutable_table.commit.rewrite_commit import (
    CommitConflict,
    claim_identifier,
    commit_version,
)

BASE = "file:/wh/analytics.db/stock"
V1 = f"{BASE}/v0000000001_aaa"
REMOTE = Holder("otherhost", 1, "thrift")


class FakeMetastore:
    def __init__(self, location: str) -> None:
        self.location = location
        self.views: dict[str, dict[str, str]] = {}
        self.statements: list[str] = []
        self.before: dict[int, object] = {}  # statement index -> action run before it

    def run_sql(self, sql: str):
        index = len(self.statements)
        self.statements.append(sql)
        action = self.before.pop(index, None)
        if action:
            action()
        if sql.startswith("create view "):
            name = sql.split()[2]
            if name in self.views:
                raise RuntimeError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] {name} already exists")
            self.views[name] = dict(re.findall(r"'([^']+)' = '([^']*)'", sql))
            return []
        if sql.startswith("show tblproperties "):
            name = sql.split()[2]
            if name not in self.views:
                raise RuntimeError(f"[TABLE_OR_VIEW_NOT_FOUND] {name}")
            return list(self.views[name].items())
        if sql.startswith("describe table extended "):
            return [("id", "int"), ("Location", self.location)]
        if sql.startswith("alter table "):
            self.location = re.search(r"set location '([^']+)'", sql).group(1)
            return []
        if sql.startswith("drop view if exists "):
            self.views.pop(sql.split()[4], None)
            return []
        raise AssertionError(sql)


def commit(store: FakeMetastore, run: str, holder: Holder | None = None, clock=None) -> str:
    kwargs = {"clock": clock} if clock else {}
    try:
        commit_version(
            store.run_sql,
            model_name="stock",
            schema="analytics",
            identifier="stock",
            planned_location=V1,
            new_location=f"{BASE}/v0000000002_{run}",
            holder=holder or this_holder("session"),
            **kwargs,
        )
    except CommitConflict as exc:
        return f"conflict: {exc}"
    return "committed"


def test_a_lone_run_commits_and_drops_its_claim():
    store = FakeMetastore(V1)
    assert commit(store, "a") == "committed"
    assert store.location == f"{BASE}/v0000000002_a"
    assert store.views == {}


@pytest.mark.parametrize("point", range(4))  # before each of a lone commit's statements
def test_of_two_runs_planned_from_one_version_exactly_one_commits(point):
    store = FakeMetastore(V1)
    outcome = {}
    store.before[point] = lambda: outcome.update(b=commit(store, "b"))
    outcome["a"] = commit(store, "a")
    committed = [run for run, result in outcome.items() if result == "committed"]
    assert len(committed) == 1, outcome
    assert store.location == f"{BASE}/v0000000002_{committed[0]}"
    loser = "b" if committed == ["a"] else "a"
    assert "re-run to apply this batch" in outcome[loser]
    assert store.views == {}


def test_a_claim_dropped_while_create_view_reads_it_is_claimed_again():
    """Spark's CREATE VIEW checks that the name exists, then reads it: a holder that
    drops its claim in between makes the create fail with TABLE_OR_VIEW_NOT_FOUND
    (seen in the Thrift race lane). Nobody holds the claim then: the run claims again."""
    store = FakeMetastore(V1)
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    create = store.run_sql

    def vanishing_once(sql: str):
        if sql.startswith(f"create view {claim} ") and not store.statements:
            store.statements.append(sql)
            raise RuntimeError(
                f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {claim} cannot be found"
            )
        return create(sql)

    store.run_sql = vanishing_once  # type: ignore[method-assign]
    assert commit(store, "a") == "committed"
    assert store.location == f"{BASE}/v0000000002_a"
    assert [s.split(" tblproperties")[0] for s in store.statements[:2]] == [
        f"create view {claim}"
    ] * 2


def test_a_run_planned_from_a_version_already_replaced_does_not_commit():
    store = FakeMetastore(V1)
    assert commit(store, "a") == "committed"
    assert "another run committed a new version" in commit(store, "b")
    assert store.location == f"{BASE}/v0000000002_a"


def test_a_live_claim_of_another_run_is_a_clear_conflict():
    store = FakeMetastore(V1)
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    now = clock.now_ms()
    store.views[claim] = {"jammi.holder": REMOTE.render(), "jammi.created_ms": str(now)}
    result = commit(store, "a")
    assert "another run is committing version 2" in result
    assert store.location == V1
    assert claim in store.views  # never removed while its holder may be alive


def test_a_fresh_claim_of_an_ended_thrift_run_says_when_it_can_be_taken_over():
    """A run over thrift whose server died between its claim and its commit: its process
    on this host is gone, but a statement it sent may still be pending on a server, so
    the claim holds for its lease, and the message says that, not 'another run'."""
    store = FakeMetastore(V1)
    ended = Holder(this_holder("thrift").host, 2**22 + 12345, "thrift")  # no such pid
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    created = 1_700_000_000_000  # 22:13:20 UTC; the lease ends two minutes later
    store.views[claim] = {"jammi.holder": ended.render(), "jammi.created_ms": str(created)}
    result = commit(store, "a", clock=lambda: created + 5_000)
    assert "claimed by a run that has ended" in result
    assert "another run is committing" not in result
    assert "at 22:15:21 UTC" in result and "re-run after that time" in result
    assert store.location == V1
    assert claim in store.views


class _Sql:
    """The commit service's SQL interface over a FakeMetastore."""

    def __init__(self, store: FakeMetastore, method: str) -> None:
        self.store = store
        self.credentials = SimpleNamespace(method=method)

    def rows(self, sql: str):
        return self.store.run_sql(sql)


class _Steps:
    """The step runner's cleanup, recorded."""

    def __init__(self, cleaned: list) -> None:
        self.cleaned = cleaned

    def run_cleanup(self, cleanup) -> None:
        self.cleaned.extend(cleanup)

    @staticmethod
    def best_effort(action) -> None:
        action()


class CommittingAdapter(CommitService):
    """The commit service over a FakeMetastore, recording what it removes."""

    def __init__(self, store: FakeMetastore, method: str) -> None:
        self.removed: list = []
        self.cleaned: list = []
        versions = SimpleNamespace(  # the kept versions' service: its removals
            remove_paths=lambda relation, paths, run_id: self.removed.extend(paths)
        )
        super().__init__(_Sql(store, method), _Steps(self.cleaned), versions, None)  # type: ignore[arg-type]


def test_a_claim_held_for_its_lease_fails_the_run_without_replanning():
    """Re-planning (the whole change set and version again, a moment later) cannot get
    past a claim that holds for minutes: the run fails at once, cleaned up."""
    store = FakeMetastore(V1)
    ended = Holder(this_holder("thrift").host, 2**22 + 12345, "thrift")  # no such pid
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    now = str(clock.now_ms())
    store.views[claim] = {"jammi.holder": ended.render(), "jammi.created_ms": now}
    adapter = CommittingAdapter(store, "thrift")
    table = SimpleNamespace(schema="analytics", identifier="stock")
    new = f"{BASE}/v0000000002_a"
    with pytest.raises(rewrite_commit.ClaimLeaseHeld, match="re-run after that time"):
        adapter.commit_version(
            table, V1, new, "stock", cleanup=["drop table x"], last_attempt=False
        )
    assert adapter.removed == [new] and adapter.cleaned == ["drop table x"]


def test_a_live_claim_still_asks_for_a_replan_before_the_last_attempt():
    store = FakeMetastore(V1)
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    now = str(clock.now_ms())
    store.views[claim] = {"jammi.holder": REMOTE.render(), "jammi.created_ms": now}
    adapter = CommittingAdapter(store, "thrift")
    table = SimpleNamespace(schema="analytics", identifier="stock")
    commit_claim_pause = commit_service.RETRY_PAUSE_S
    commit_service.RETRY_PAUSE_S = 0
    try:
        committed = adapter.commit_version(
            table, V1, f"{BASE}/v0000000002_a", "stock", last_attempt=False
        )
    finally:
        commit_service.RETRY_PAUSE_S = commit_claim_pause
    assert committed is False and adapter.cleaned == []


def test_a_claim_of_a_dead_run_is_taken_over_at_the_next_attempt():
    store = FakeMetastore(V1)
    crashed = Holder(this_holder("session").host, 2**22 + 12345, "session")  # no such pid
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    store.views[claim] = {
        "jammi.holder": crashed.render(),
        "jammi.created_ms": str(clock.now_ms()),
    }
    assert commit(store, "a") == "committed"
    assert any(claim_identifier("stock", 2, 1) in s for s in store.statements)
    assert store.views == {}


def test_an_expired_claim_is_taken_over_but_a_fresh_one_is_not():
    store = FakeMetastore(V1)
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    old = clock.now_ms() - rewrite_commit.CLAIM_LEASE_MS - 1
    store.views[claim] = {"jammi.holder": REMOTE.render(), "jammi.created_ms": str(old)}
    assert commit(store, "a") == "committed"


def test_a_holder_that_held_its_claim_too_long_gives_up():
    store = FakeMetastore(V1)
    ticks = iter([0, rewrite_commit.CLAIM_HOLD_LIMIT_MS + 1])
    result = commit(store, "a", clock=lambda: next(ticks))
    assert "held longer than" in result
    assert store.location == V1
    assert store.views == {}


def test_the_lease_is_an_operators_setting(monkeypatch):
    store = FakeMetastore(V1)
    claim = f"analytics.{claim_identifier('stock', 2, 0)}"
    # 50 s old: within the default lease of 120 s, past a lease of 40 s
    created = clock.now_ms() - 50_000
    store.views[claim] = {"jammi.holder": REMOTE.render(), "jammi.created_ms": str(created)}
    assert commit(store, "a").startswith("conflict: ")
    monkeypatch.setenv(rewrite_commit.LEASE_ENV, "40")
    assert rewrite_commit.claim_lease_ms() == 40_000
    assert commit(store, "a") == "committed"


@pytest.mark.parametrize("value", ["20", "soon", "-5", "1.5"])
def test_a_lease_shorter_than_the_hold_limit_or_not_a_number_is_refused(monkeypatch, value):
    monkeypatch.setenv(rewrite_commit.LEASE_ENV, value)
    with pytest.raises(Exception, match="JAMMI_CLAIM_LEASE_SECONDS"):
        rewrite_commit.claim_lease_ms()
