"""The commit paths' service: the rewrite formats' compare-and-swap commit
(``rewrite_commit``), the MERGE's commit and its conflicts (``merge_commit``; Iceberg's
counted and branch commits), statements that check the batch on their way in, a change
set's counts, and the sweep of what crashed runs left beside a table (``leftovers``).
The attempts' commits (apply_service.py) drive it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common import clock
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table import version_locations
from dbt.adapters.jammi.mutable_table.commit import (
    branch_commit,
    iceberg_merge,
    leftovers,
    merge_commit,
    ownership,
    rewrite_commit,
)
from dbt.adapters.jammi.mutable_table.commit.transaction import Transaction
from dbt.adapters.jammi.mutable_table.steps import StepRunner
from dbt.adapters.jammi.mutable_table.versions.versions_service import VersionsService

logger = AdapterLogger("Jammi")

# A rewrite run that loses its commit to a concurrent run pauses this long to re-plan.
RETRY_PAUSE_S = 0.5

# dbt's relation cache, as far as the sweep asks it: ``(database, schema) in cache`` (the
# schema was listed in this invocation) and ``get_relations(database, schema)``
RelationCache = Any


class CommitService:
    """``cache``: dbt's relation cache (the sweep skips a schema dbt listed without
    leftovers)."""

    def __init__(
        self, sql: SqlSession, steps: StepRunner, versions: VersionsService, cache: RelationCache
    ) -> None:
        self.sql, self.steps, self.versions, self.cache = sql, steps, versions, cache

    # --- commit protocol and leftovers (rewrite formats) ------------------------

    def _holder(self) -> ownership.Holder:
        method = getattr(self.sql.credentials, "method", "")
        return ownership.this_holder(str(getattr(method, "value", method)))

    def holder_properties(self) -> dict[str, str]:
        """Properties that stamp a run's staging table with its owner (``ownership``)."""
        return ownership.holder_properties(self._holder(), clock.now_ms())

    def commit_merge(
        self,
        merge_sql: str,
        model_name: str,
        last_attempt: bool,
        identity_from: Any = None,
        iceberg_target: Any = None,
    ) -> dict[str, Any]:
        """The MERGE applier's commit (``merge_commit``): ``committed`` False when Delta
        refused it for a concurrent commit and the run re-plans, or when a batch check
        stopped a batch-sourced MERGE (``rejected``: the check's kind; the caller reads
        the check's samples and fails); ``counts`` what the committed MERGE changed.
        ``identity_from``: where the MERGE numbers new keys from, recorded in its commit
        (rules/identity.py) and in no other. ``iceberg_target``: the Iceberg table of a
        batch-sourced MERGE, whose counts its own snapshot holds (``iceberg_merge``)."""
        if iceberg_target is not None:
            return self._commit_counted_iceberg_merge(
                merge_sql, str(iceberg_target), model_name, last_attempt
            )
        self.versions.tag_delta_commits(identity_from)
        try:
            rows = merge_commit.commit_merge(self.sql.rows, merge_sql, model_name, last_attempt)
        except merge_commit.BatchRejected as rejected:
            return {"committed": False, "counts": None, "rejected": rejected.kind}
        finally:
            if identity_from is not None:
                self.versions.tag_delta_commits()
        if rows is None:
            return {"committed": False, "counts": None}
        return {"committed": True, "counts": merge_commit.merge_counts(rows)}

    def _commit_counted_iceberg_merge(
        self, merge_sql: str, table: str, model_name: str, last_attempt: bool
    ) -> dict[str, Any]:
        try:
            counts = iceberg_merge.commit_counted_merge(
                self.sql.rows,
                merge_sql,
                table,
                uuid.uuid4().hex,
                model_name,
                last_attempt,
            )
        except merge_commit.BatchRejected as rejected:
            return {"committed": False, "counts": None, "rejected": rejected.kind}
        if counts is None:
            return {"committed": False, "counts": None}
        return {"committed": True, "counts": counts}

    def commit_merge_on_branch(
        self,
        merge_sql: str,
        target_relation: Any,
        model_name: str,
        last_attempt: bool,
        records: Transaction,
    ) -> dict[str, Any]:
        """Iceberg with records that must commit with its MERGE (tombstones, an identity
        column's mark, a changelog's events): the MERGE on a branch, its records tagged
        with the branch's snapshot, then the fast-forward that commits them with it
        (``branch_commit``). ``committed`` False when another run committed
        first and the run re-plans."""
        rows = branch_commit.commit_on_branch(
            self.sql.rows,
            merge_sql,
            str(target_relation),
            version_locations.new_run_id(),
            records.statements(),
            model_name,
            last_attempt,
            self.sql.default_catalog(),
        )
        if rows is None:
            return {"committed": False, "counts": None}
        return {"committed": True, "counts": merge_commit.merge_counts(rows)}

    def run_checked(self, sql: str) -> Optional[str]:
        """Run a statement that checks the batch on its way in (checks.sql,
        mutable_checked_batch_sql): None when it ran, else the kind of the batch check
        that stopped it (nothing was written). Any other error is raised."""
        try:
            self.sql.rows(sql)
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            kind = merge_commit.failed_batch_check(str(exc))
            if kind is None:
                raise
            return kind
        return None

    def change_counts(self, change_set: Any) -> dict[str, Any]:
        """What a staged change set (or its view) inserts, updates and deletes."""
        found = dict.fromkeys(("insert", "update", "delete"), 0)
        for kind, count in self.sql.rows(
            f"select _change, count(*) from {change_set} group by _change"
        ):
            found[str(kind)] = int(count)
        return merge_commit.change_counts(found["insert"], found["update"], found["delete"])

    def commit_version(
        self,
        target_relation: Any,
        planned_location: str,
        new_location: str,
        model_name: str,
        cleanup: Sequence[str] = (),
        last_attempt: bool = True,
        staged_paths: Sequence[str] = (),
    ) -> bool:
        """The compare-and-swap commit of a written version (``rewrite_commit``). True when
        it committed. When it lost to a concurrent run, this run's version directory (and
        ``staged_paths``, what it staged for the version: its changelog events) is
        removed and, unless this was the last attempt, False is returned after a short
        pause (the caller re-plans against the winner's version); on the last attempt, on
        a claim a re-plan would meet again (``ClaimLeaseHeld``), or on any other failure,
        ``cleanup`` (this run's own relations) runs too and the error is raised."""
        try:
            rewrite_commit.commit_version(
                self.sql.rows,
                model_name=model_name,
                schema=str(target_relation.schema),
                identifier=str(target_relation.identifier),
                planned_location=planned_location,
                new_location=new_location,
                holder=self._holder(),
            )
            return True
        except rewrite_commit.CommitConflict as exc:
            self._remove_uncommitted(target_relation, [new_location, *staged_paths])
            if not last_attempt and exc.replan_helps:
                logger.info(f"mutable_table '{model_name}': re-planning ({exc})")
                time.sleep(RETRY_PAUSE_S)
                return False
            self.steps.run_cleanup(cleanup)
            raise
        except BaseException:
            self._remove_uncommitted(target_relation, [new_location, *staged_paths])
            self.steps.run_cleanup(cleanup)
            raise

    def _remove_uncommitted(self, target_relation: Any, paths: Sequence[str]) -> None:
        """This run's own uncommitted version (and what it staged for it), on every
        connection method (over thrift through the server's metastore, versions_service)."""
        remove = self.versions.remove_paths
        self.steps.best_effort(
            lambda: remove(target_relation, list(paths), version_locations.new_run_id())
        )

    def _may_hold_leftovers(self, relation: Any) -> bool:
        """False when dbt's relation cache listed the table's schema at the start of this
        invocation and found no run relation of the table there: what earlier runs left
        behind would have been listed, so the run skips its own listing (one statement).
        What runs still going now leave is swept by a later invocation."""
        database, schema = relation.database, relation.schema
        if (database, schema) not in self.cache:
            return True
        identifier = str(relation.identifier)
        return any(
            leftovers.is_leftover(identifier, str(cached.identifier))
            for cached in self.cache.get_relations(database, schema)
        )

    def drop_abandoned_leftovers(
        self, target_relation: Any, current_location: Optional[str], run_id: str
    ) -> list[str]:
        """Drop staging tables whose runs are provably gone and claims the table has
        passed (``leftovers``); returns what was dropped."""
        schema, identifier = str(target_relation.schema), str(target_relation.identifier)
        if not self._may_hold_leftovers(target_relation):
            return []
        pattern = sql_string_literal(leftovers.leftover_pattern(identifier))
        names = [
            str(row[1])
            for row in self.sql.rows(f"show tables in {schema} like {pattern}")
            if len(row) > 2 and not row[2]
        ]
        version = version_locations.parse_version(current_location) if current_location else None
        dropped = []
        for name in leftovers.stale_claims(identifier, names, version):
            self.sql.rows(f"drop view if exists {schema}.{name}")
            dropped.append(name)
        now = clock.now_ms()
        for name in leftovers.foreign_staging(identifier, names, run_id):
            try:
                rows = self.sql.rows(f"show tblproperties {schema}.{name}")
            except Exception as exc:  # noqa: BLE001 - dropped by its owner meanwhile
                if rewrite_commit.not_found(str(exc)):
                    continue
                raise
            properties = {str(r[0]): str(r[1]) for r in rows if len(r) >= 2}
            if ownership.abandoned(properties, now, leftovers.STAGING_MAX_AGE_MS):
                self.sql.rows(f"drop table if exists {schema}.{name}")
                dropped.append(name)
        for name in dropped:
            logger.debug(f"mutable_table: dropped abandoned {schema}.{name}")
        return dropped
