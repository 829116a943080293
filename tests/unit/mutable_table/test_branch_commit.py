"""Iceberg's tombstones commit with their delete through the run's branch
(mutable_table/commit/branch_commit.py): the statements in order, what a refused
fast-forward means, and which tags count (rules/tombstones.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.commit import branch_commit
from dbt.adapters.jammi.mutable_table.commit.merge_commit import MergeConflict
from dbt.adapters.jammi.mutable_table.rules import tombstone_phases

MERGE = "merge into s.items as t\nusing s.items__change_set as s\non t.id = s.id\n..."
INSERT = f"insert into s.items__jammi_tombstones select id, 7, '{branch_commit.HEAD_TAG}' from c"
MARK = f"insert into s.items__jammi_identity select '{branch_commit.HEAD_TAG}', 12"
BRANCH = branch_commit.branch_name("Run-1")


class FakeIceberg:
    """Answers the refs and history reads; records every statement."""

    def __init__(self, merge_makes_snapshot=True, main_moved=False, leftover=None, drop_at=None):
        self.statements: list[str] = []
        self.refs = {"main": 10, **(leftover or {})}
        self.history = [9, 10]
        self.merge_makes_snapshot = merge_makes_snapshot
        self.main_moved = main_moved
        self.drop_at = drop_at  # another run's clean-up drops this run's branch here
        self.catalog = "spark_catalog"

    def __call__(self, sql: str):
        self.statements.append(sql)
        if self.drop_at and sql.startswith(self.drop_at):  # dropped before this statement
            self.refs.pop(BRANCH, None)
            if sql.startswith("merge into"):
                raise RuntimeError(f"Cannot use branch (does not exist): {BRANCH}")
            raise RuntimeError(f"java.lang.IllegalArgumentException: Ref does not exist: {BRANCH}")
        if self.drop_at == "after merge into" and sql.startswith("select name, snapshot_id"):
            if any(s.startswith("merge into") for s in self.statements):
                self.refs.pop(BRANCH, None)  # dropped between the MERGE and the refs read
        if sql.startswith("select name, snapshot_id"):
            return list(self.refs.items())
        if sql.startswith("select snapshot_id from s.items.history"):
            return [(s,) for s in self.history]
        if sql.startswith(f"alter table s.items create branch {BRANCH}"):
            self.refs[BRANCH] = self.refs["main"]
        elif sql.startswith("merge into") and self.merge_makes_snapshot:
            self.refs[BRANCH] = 11
        elif sql.startswith("call lake.system.fast_forward") and self.catalog == "lake":
            self.refs["main"] = self.refs[BRANCH]
        elif sql.startswith("call spark_catalog.system.fast_forward"):
            if self.main_moved:
                raise RuntimeError(f"Cannot fast-forward: main is not an ancestor of {BRANCH}")
            self.refs["main"] = self.refs[BRANCH]
        return []


def commit(fake, last_attempt=False):
    return branch_commit.commit_on_branch(
        fake, MERGE, "s.items", "Run-1", [INSERT, MARK], "items", last_attempt, "spark_catalog"
    )


def test_the_merge_goes_to_the_branch_and_the_fast_forward_commits_it_with_its_tombstones():
    fake = FakeIceberg()
    assert commit(fake) == []
    merge = next(s for s in fake.statements if s.startswith("merge into"))
    assert merge.startswith(f"merge into s.items.branch_{BRANCH} as t\nusing")
    inserted = next(s for s in fake.statements if s.startswith("insert into"))
    assert inserted.endswith("select id, 7, '11' from c")  # tagged with the branch's snapshot
    assert "insert into s.items__jammi_identity select '11', 12" in fake.statements
    order = [s.split()[0] + " " + s.split()[1] for s in fake.statements]
    assert (
        order.index("merge into")
        < order.index("insert into")
        < order.index("call spark_catalog.system.fast_forward('s.items',")
    )
    assert fake.refs["main"] == 11
    assert fake.statements[-1] == f"alter table s.items drop branch if exists {BRANCH}"


def test_each_appended_table_is_refreshed_after_the_merge_and_before_its_append():
    # A cached, stale read of the changelog's records numbered a version as the last
    # committed run did (seen on a Thrift server's two sessions): the append reads fresh.
    record = (
        f"insert into s.items__jammi_changelog select '{branch_commit.HEAD_TAG}', "
        "(select coalesce(max(_offset), 0) + 1 from s.items__jammi_changelog), 'dir'"
    )
    fake = FakeIceberg()
    branch_commit.commit_on_branch(
        fake, MERGE, "s.items", "Run-1", [INSERT, MARK, record], "items", False, "spark_catalog"
    )
    refreshed = [s for s in fake.statements if s.startswith("refresh table")]
    assert refreshed == [
        "refresh table s.items__jammi_tombstones",
        "refresh table s.items__jammi_identity",
        "refresh table s.items__jammi_changelog",
    ]
    merge = next(i for i, s in enumerate(fake.statements) if s.startswith("merge into"))
    first_append = next(i for i, s in enumerate(fake.statements) if s.startswith("insert into"))
    assert all(merge < fake.statements.index(r) < first_append for r in refreshed), fake.statements


def test_appended_tables_are_named_once_and_other_statements_name_none():
    staged = "insert overwrite directory '/t/_staging/x' using parquet select 1"
    assert branch_commit.appended_tables([INSERT, staged, INSERT, MARK]) == [
        "s.items__jammi_tombstones",
        "s.items__jammi_identity",
    ]


def test_the_fast_forward_is_the_default_catalogs_procedure():
    fake = FakeIceberg()
    fake.catalog = "lake"
    assert (
        branch_commit.commit_on_branch(
            fake, MERGE, "s.items", "Run-1", [INSERT, MARK], "items", False, "lake"
        )
        == []
    )
    assert "call lake.system.fast_forward('s.items', 'main', 'jammi_run_run_1')" in fake.statements
    assert fake.refs["main"] == 11


def test_a_merge_that_made_no_snapshot_tags_its_tombstones_with_the_current_one():
    fake = FakeIceberg(merge_makes_snapshot=False)
    commit(fake)
    assert any(s.endswith("select id, 7, '10' from c") for s in fake.statements)
    assert not any("fast_forward" in s for s in fake.statements)


def test_a_table_that_moved_on_is_a_conflict_then_a_clear_error():
    fake = FakeIceberg(main_moved=True)
    assert commit(fake) is None  # the caller re-plans
    assert fake.refs["main"] == 10
    assert fake.statements[-1].endswith(f"drop branch if exists {BRANCH}")
    with pytest.raises(MergeConflict, match="mutable_table 'items': concurrent runs"):
        commit(FakeIceberg(main_moved=True), last_attempt=True)


def test_a_published_leftover_branch_is_dropped_and_a_live_one_kept():
    leftover = {"jammi_run_old": 9, "jammi_run_live": 99, "jammi_run_new": 10, "audit": 9}
    fake = FakeIceberg(leftover=leftover)
    commit(fake)
    drops = [s for s in fake.statements if "drop branch" in s]
    assert "alter table s.items drop branch if exists jammi_run_old" in drops
    # jammi_run_new sits at the current snapshot: a run that has just made it may be
    # about to MERGE into it.
    assert not any(name in s for s in drops for name in ("_live", "_new", " audit"))


@pytest.mark.parametrize(
    "drop_at",
    ["merge into", "call spark_catalog.system.fast_forward", "after merge into"],
)
def test_a_branch_dropped_under_the_run_is_a_conflict(drop_at):
    fake = FakeIceberg(drop_at=drop_at)
    assert commit(fake) is None  # the caller re-plans
    assert fake.refs["main"] == 10
    with pytest.raises(MergeConflict, match="mutable_table 'items': concurrent runs"):
        commit(FakeIceberg(drop_at=drop_at), last_attempt=True)


def test_a_record_append_stopped_by_the_identity_guard_is_a_conflict():
    # the mark's insert reads the change set again; another run stored higher numbers
    class Moved(FakeIceberg):
        def __call__(self, sql):
            if sql.startswith("insert into s.items__jammi_identity"):
                raise RuntimeError("jammi-identity-moved: another run stored numbers above 12")
            return super().__call__(sql)

    fake = Moved()
    assert commit(fake) is None  # the caller re-plans
    assert not any("fast_forward" in s for s in fake.statements)
    assert fake.refs["main"] == 10


@pytest.mark.parametrize(
    "statement",
    [
        "alter table s.items create branch",
        "alter table s.items drop branch if exists jammi_run_run_1",
    ],
)
def test_a_branch_create_that_lost_the_catalogs_swap_is_a_conflict(statement):
    # another run's commit changed the table's metadata between this run's read and swap
    class Raced(FakeIceberg):
        def __call__(self, sql):
            if sql.startswith(statement) and not any("merge" in s for s in self.statements):
                self.statements.append(sql)
                raise RuntimeError(
                    "org.apache.iceberg.exceptions.CommitFailedException: "
                    "Table metadata refresh is required"
                )
            return super().__call__(sql)

    fake = Raced()
    assert commit(fake) is None  # the caller re-plans
    assert not any(s.startswith("merge into") for s in fake.statements)
    with pytest.raises(MergeConflict, match="concurrent runs"):
        commit(Raced(), last_attempt=True)


def test_an_error_that_is_no_conflict_is_raised_as_it_is():
    class Broken(FakeIceberg):
        def __call__(self, sql):
            if sql.startswith("call spark"):
                raise RuntimeError("disk full")
            return super().__call__(sql)

    with pytest.raises(RuntimeError, match="disk full"):
        commit(Broken())


def test_the_insert_must_carry_the_head_tag_and_the_merge_its_target():
    for records in ([], [INSERT, "insert into x select 1"]):
        with pytest.raises(ValueError, match="head tag"):
            branch_commit.commit_on_branch(
                FakeIceberg(), MERGE, "s.items", "r", records, "items", False, "spark_catalog"
            )
    with pytest.raises(ValueError, match="not a MERGE into s.other"):
        branch_commit.merge_into_branch(MERGE, "s.other", BRANCH)


def test_counting_tags_and_the_tags_a_rollback_drops():
    assert branch_commit.committed_tags_sql("s.items") == (
        "select cast(snapshot_id as string) from s.items.history where is_current_ancestor"
    )
    history = [  # newest first
        {"version": 555, "invocation_id": "inv-c"},
        {"version": 12, "invocation_id": "inv-b"},
        {"version": 900, "invocation_id": "inv-a"},
    ]
    assert tombstone_phases.rollback_merge_tags("iceberg", history, 900) == ["555", "12"]
    assert tombstone_phases.rollback_merge_tags("delta", history, 12) == ["inv-c"]
    assert tombstone_phases.rollback_merge_tags("iceberg", history, 555) == []
