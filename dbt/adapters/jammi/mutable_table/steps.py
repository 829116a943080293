"""Running a protocol's steps all or nothing (``StepRunner``): each step's statement in
order; on a failure, what this run did undone in reverse (a completed step's
``undo_sql``, a started step's ``undo_paths``), then its own relations dropped, and a
lost race for a name said as such. The commits (commit/version_commit.py,
apply_service.py) and adoption run through it."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.commit import merge_commit, rewrite_commit

# A shared relation's create racing another run's create of it: tries in all.
CREATE_RACE_ATTEMPTS = 4

logger = AdapterLogger("Jammi")


class StepRunner:
    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql

    def all_or_nothing(
        self, steps: Sequence[Mapping[str, Any]], cleanup: Sequence[str] = ()
    ) -> None:
        """Run each step's ``sql`` in order. If one fails, undo only what this run did:
        in reverse order, each *completed* step's ``undo_sql`` (so a ``CREATE TABLE``
        that failed because the table exists never leads to dropping that table), and
        each *started* step's ``undo_paths`` (directories named after this run, which a
        failed write may have filled partly); then every ``cleanup`` statement (this
        run's own relations), then re-raise. A step with ``creates`` names the relation
        it creates: if another run created it first, the error says so."""
        execute = self.sql.execute
        started: list[Mapping[str, Any]] = []
        try:
            for step in steps:
                started.append(step)
                if step.get("tolerate_exists"):
                    self.create_if_not_exists(step["sql"])
                else:
                    execute(step["sql"], fetch=True)
        except BaseException as exc:
            failed = started[-1] if started else {}
            for step in reversed(started):
                undo_sql = step.get("undo_sql") if step is not failed else None
                for undo in [undo_sql] if undo_sql else []:
                    self.best_effort(lambda sql=undo: execute(sql))
                for path in step.get("undo_paths") or ():
                    self.best_effort(lambda p=path: self.remove_if_ours(p))
            self.run_cleanup(cleanup)
            created = failed.get("creates")
            if created:
                reason = merge_commit.lost_create_message(
                    str(created), str(exc), lambda: self.sql.table_listed(str(created))
                )
                if reason:
                    raise run_errors.MutableRunError(reason) from exc
            raise

    def create_if_not_exists(self, sql: str) -> None:
        """A ``create ... if not exists`` of a relation runs share (the registry), racing
        another run's create of it: Spark may still report that it exists, and Delta
        refuses the second of two concurrent creates (a conflict on the new log's first
        commit, or the other run's files already at the location) -- then the other
        run's create is finishing, and the statement is repeated until it is a no-op."""
        for attempt in range(CREATE_RACE_ATTEMPTS):
            try:
                self.sql.execute(sql, fetch=True)
                return
            except Exception as exc:
                message = str(exc)
                if rewrite_commit.already_exists(message):
                    return
                racing = merge_commit.is_commit_conflict(message)
                if not (racing or merge_commit.NON_EMPTY_LOCATION in message):
                    raise
                if attempt == CREATE_RACE_ATTEMPTS - 1:
                    raise
                time.sleep(0.5 * (attempt + 1))

    def run_cleanup(self, cleanup: Sequence[str]) -> None:
        for sql in cleanup:
            self.best_effort(lambda s=sql: self.sql.execute(s))

    @staticmethod
    def best_effort(action: Any) -> None:
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - keep undoing
            logger.warning(f"mutable_table: undo step failed: {exc}")

    def remove_if_ours(self, path: str) -> None:
        """Remove a version directory; a base directory only when empty (``path`` ending
        in ``/`` means: the directory, if nothing is left in it)."""
        if path.endswith("/"):
            if self.sql.local_filesystem:
                storage.remove_if_empty(path.rstrip("/"))
        else:
            self.remove_path(path)

    def remove_path(self, path: str) -> bool:
        if not self.sql.local_filesystem:
            return False
        return storage.remove(path)

    def remove_empty_dir(self, path: str) -> bool:
        """Remove a directory that holds nothing (what a failed CTAS leaves)."""
        return self.sql.local_filesystem and storage.remove_if_empty(path)
