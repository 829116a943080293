"""Iceberg: a MERGE and its records (tombstones, an identity mark) committed together,
by way of a branch.

Under a version rule with ``delete_when`` a delete leaves a tombstone (rules/tombstones.py)
that must count exactly when the delete committed. On Delta the tombstones are tagged
with the dbt invocation id, which Delta's commit carries (``commitInfo.userMetadata``).
An Iceberg commit made by SQL carries no id of the run, so the run commits in three steps
whose only commit to the table is the last:

1. ``ALTER TABLE t CREATE BRANCH jammi_run_<id>`` (from the current snapshot), and the
   run's MERGE into that branch (``t.branch_jammi_run_<id>``): a snapshot no reader of
   the table sees;
2. the run's records are appended, tagged with that snapshot's id (``head``): its
   tombstones to ``t__jammi_tombstones``, an identity column's high-water mark to
   ``t__jammi_identity``;
3. ``CALL <catalog>.system.fast_forward(t, 'main', branch)`` (the session's default
   catalog, where ``t`` resolves) makes the branch's snapshot the table's
   current one: one atomic catalog commit, refused when another run committed to the
   table after the branch was made (main is then no ancestor of the branch): a conflict,
   and the run re-plans, as for a refused MERGE.

Step 2's appends may compute what they write from what their table holds (the
changelog's next offset is one more than its highest committed one). A session's Iceberg
catalog caches a table it has loaded (Iceberg's ``cache-enabled``, 30 s by default), and
an append validates nothing against what it read: a stale read of the records table
would number a version as the last committed run did, both rows would count, and one
version's events would never be published. So every table step 2 appends to is
refreshed after the branch is made and before its append: a run that committed before
the branch was made had appended its records before its own fast-forward, so the fresh
read holds them, and a run that commits after the branch was made refuses this run's
fast-forward.

A record counts when its tag is the id of a snapshot in the table's current ancestry
(``t.history``), so a run killed before step 3 leaves records no reader takes, and one
killed after it has committed both. A MERGE that changed nothing makes no snapshot: the
records are then tagged with the current snapshot and count at their own commit (they
are the run's only change). The branch is dropped after step 3 whatever happened. One left
by a killed run is dropped by a later run once its head is in the table's ancestry and the
table has moved past it; until then it may be a branch another run made a moment ago
from the current snapshot, and stays. A branch that was dropped under a run (its run
could no longer publish: the table had moved on) is a conflict, and that run re-plans.
A leftover whose head never reached the ancestry stays (it keeps its snapshot's files)
until it is dropped by hand (docs/mutable_table.md, "Deletes stay deleted").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.engine.commit_conflicts import is_commit_conflict
from dbt.adapters.jammi.mutable_table.commit.merge_commit import MergeConflict, commit_merge
from dbt.adapters.jammi.mutable_table.rules.identity import identity_moved

RunSql = Callable[[str], Sequence[Sequence[Any]]]

BRANCH_PREFIX = "jammi_run_"
# What the tombstone insert carries where the branch's head snapshot id goes.
HEAD_TAG = "__jammi_branch_head__"
# What a refused publish says: fast_forward refused because the table moved on since the
# branch was made, or the branch was dropped under the run (a later run's clean-up, which
# drops only branches the table has moved past).
_CONFLICTS = (
    "is not an ancestor of",
    "Cannot use branch (does not exist)",
    "Ref does not exist",
)


# The table a record append writes to: ``insert into <table> ...``.
_APPENDED_TABLE = re.compile(r"^\s*insert\s+into\s+([^\s(]+)", re.IGNORECASE)


def appended_tables(records: Sequence[str]) -> list[str]:
    """The tables ``records`` append to, each once, in order."""
    tables: list[str] = []
    for sql in records:
        match = _APPENDED_TABLE.match(sql)
        if match and match.group(1) not in tables:
            tables.append(match.group(1))
    return tables


class BranchGone(Exception):
    """The run's branch was dropped before it could publish it."""


def branch_name(run_id: str) -> str:
    """The run's branch: its id, lowercased, letters, digits and ``_`` only."""
    return BRANCH_PREFIX + re.sub(r"[^a-z0-9_]", "_", str(run_id).lower())


def merge_into_branch(merge_sql: str, target: str, branch: str) -> str:
    """The run's MERGE with the branch as its target."""
    head = f"merge into {target} as t"
    text = merge_sql.lstrip()
    if not text.lower().startswith(head.lower()):
        raise ValueError(f"not a MERGE into {target}: {text[:80]!r}")
    return f"merge into {target}.branch_{branch} as t" + text[len(head) :]


def ref_snapshots(run_sql: RunSql, target: str) -> dict[str, int]:
    """The table's branches and tags: name -> snapshot id."""
    return {str(r[0]): int(r[1]) for r in run_sql(f"select name, snapshot_id from {target}.refs")}


def drop_published_branches(run_sql: RunSql, target: str, refs: dict[str, int]) -> None:
    """Drop the branches of earlier runs whose head the table's ancestry holds and the
    table has moved past (a run killed after its fast-forward). A branch at the current
    snapshot may have been made a moment ago by a run in progress, and one whose head is
    not in the ancestry may hold a run's unpublished MERGE: both stay."""
    published = {int(r[0]) for r in run_sql(f"select snapshot_id from {target}.history")}
    current = refs.get("main")
    for name, snapshot in refs.items():
        if name.startswith(BRANCH_PREFIX) and snapshot in published and snapshot != current:
            run_sql(f"alter table {target} drop branch if exists {name}")


def _refused(exc: BaseException, model_name: str, last_attempt: bool) -> None:
    """A publish refused by a concurrent commit: None for the caller to re-plan, or
    ``MergeConflict`` on the last attempt. Any other error is raised as it is."""
    message = str(exc)
    # is_commit_conflict: the branch's create or drop lost the catalog's swap to another
    # run's commit. identity_moved: the record appends read the run's change set again,
    # whose identity guard stops when another run stored higher numbers since the plan
    # (rules/identity.py).
    conflict = (
        any(m in message for m in _CONFLICTS)
        or is_commit_conflict(message)
        or identity_moved(message)
    )
    if not isinstance(exc, BranchGone) and not conflict:
        raise exc
    if last_attempt:
        raise MergeConflict(
            f"mutable_table '{model_name}': concurrent runs committed to the table "
            "before this run could publish its MERGE on every attempt. Nothing of "
            "this run was written; re-run to apply the batch on top of theirs."
        ) from exc


def commit_on_branch(
    run_sql: RunSql,
    merge_sql: str,
    target: str,
    run_id: str,
    records: Sequence[str],
    model_name: str,
    last_attempt: bool,
    catalog: str,
) -> Optional[Sequence[Sequence[Any]]]:
    """Steps 1-3 above. ``records``: the appends tagged with the branch's snapshot (the
    tombstones, an identity column's high-water mark). The MERGE's result rows once
    committed; None when another run committed first and the caller may re-plan;
    ``MergeConflict`` on the last attempt. ``catalog``: the session's default catalog,
    whose ``fast_forward`` procedure publishes the branch."""
    if not records or any(HEAD_TAG not in sql for sql in records):
        raise ValueError("every record append must carry the branch head tag")
    branch = branch_name(run_id)
    refs = ref_snapshots(run_sql, target)
    try:
        drop_published_branches(run_sql, target, {n: s for n, s in refs.items() if n != branch})
        run_sql(f"alter table {target} drop branch if exists {branch}")
        run_sql(f"alter table {target} create branch {branch}")
        rows = commit_merge(
            run_sql, merge_into_branch(merge_sql, target, branch), model_name, last_attempt
        )
        if rows is None:
            return None
        refs = ref_snapshots(run_sql, target)
        if branch not in refs:
            raise BranchGone(branch)
        head = refs[branch]
        for table in appended_tables(records):
            run_sql(f"refresh table {table}")  # no cached, stale read (above)
        for sql in records:
            run_sql(sql.replace(HEAD_TAG, str(head)))
        if refs.get("main") != head:  # else no snapshot was made: the records are the change
            run_sql(f"call {catalog}.system.fast_forward('{target}', 'main', '{branch}')")
        return rows
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        _refused(exc, model_name, last_attempt)
        return None
    finally:
        try:
            run_sql(f"alter table {target} drop branch if exists {branch}")
        except Exception:  # noqa: BLE001 - the next run drops a published branch
            pass


def committed_tags_sql(target: str) -> str:
    """The tags whose tombstones count: the snapshots of the table's current ancestry."""
    return f"select cast(snapshot_id as string) from {target}.history where is_current_ancestor"
