"""Deletes stay deleted: the tombstones' phases in a run (rules/tombstones.py says what
a tombstone is; docs/mutable_table.md#deletes-stay-deleted).

- ``prepare``, before a plan: where the plan reads the keys' live tombstones from, and
  the plan's clock;
- ``apply``, before the commit: the tombstones the plan leaves, by format:
  - parquet/orc: the next version's complete live set, written into its version
    directory (``_jammi_tombstones``) before the commit, which commits both;
  - Delta: appended to ``<table>__jammi_tombstones`` before the MERGE, tagged with the
    run's invocation id; a row counts only once the table's history holds a commit of
    that invocation, so a run killed before its MERGE leaves rows nobody reads;
  - Iceberg: the append the branch commit runs after the MERGE into the run's branch,
    tagged with the branch's snapshot (commit/branch_commit.py);
- ``rollback``: the kept version's tombstones become the current ones.

The candidates (this plan's new tombstones) are the planner's query, rendered by the
macros; everything else is built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.validation import quote_identifier as q
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table.commit.branch_commit import HEAD_TAG, committed_tags_sql
from dbt.adapters.jammi.mutable_table.format_reads import delta_history
from dbt.adapters.jammi.mutable_table.rules import tombstones
from dbt.adapters.jammi.mutable_table.table_format import DeltaFormat, IcebergFormat, table_format
from dbt.adapters.jammi.mutable_table.versions.version_reads import path_relation_sql

RunSql = Callable[[str], Sequence[Sequence[Any]]]

logger = AdapterLogger("jammi")


def select_list(definition: Mapping[str, Any], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{q(c[0])}" for c in tombstones.columns(definition))


def no_tombstones_sql(definition: Mapping[str, Any]) -> str:
    """No tombstones, typed."""
    typed = ", ".join(f"cast(null as {c[1]}) as {q(c[0])}" for c in tombstones.columns(definition))
    return f"select {typed} where 1 = 0"


def _key_match(definition: Mapping[str, Any], left: str, right: str) -> str:
    keys = "".join(f" and {left}.{q(k)} = {right}.{q(k)}" for k in definition["storage_key"])
    return f"{left}.tenant_id <=> {right}.tenant_id{keys}"


def cutoff_ms(definition: Mapping[str, Any], now: int) -> int:
    """Tombstones deleted before this have expired, at the plan's clock ``now``."""
    retention = tombstones.retention_ms(definition) or tombstones.DEFAULT_RETENTION_MS
    return tombstones.live_cutoff_ms(retention, int(now))


def live_predicate(definition: Mapping[str, Any], now: int) -> str:
    return f"{q(tombstones.DELETED_MS_COLUMN)} >= {cutoff_ms(definition, now)}"


def readable(run_sql: RunSql, file_format: str, location: str) -> bool:
    """Whether a version directory holds tombstones (versions written before the rule,
    or without a version rule, have none). Asked of Spark, so it works over every
    connection method."""
    tomb_dir = tombstones.version_tombstone_dir(location)
    try:
        run_sql(f"select 1 from {file_format}.`{tomb_dir}` limit 0")
    except Exception as exc:  # noqa: BLE001 - only a missing path means "none"
        if tombstones.path_missing(str(exc)):
            return False
        raise
    return True


def committed_tags(history: Sequence[Mapping[str, Any]]) -> str:
    """Delta: what the tags of counting tombstones are ``in``, the invocations with a
    commit in the table's history, listed ('' when none). A run that died before its
    commit left tombstones no commit names."""
    return ", ".join(sql_string_literal(t) for t in tombstones.committed_invocations(history))


def prepare(
    definition: Mapping[str, Any],
    state: Any,
    file_format: str,
    now: int,
    merge_table: Callable[[], Optional[str]],
    committed_tags: Callable[[], str],
    readable: Callable[[str], bool],
) -> dict[str, Any]:
    """The plan's tombstone values: ``tombstone_now_ms`` (when its deletes happen; with
    tombstones also the planner's ``now_ms``) and ``tombstones_from``, a query of the
    keys' live tombstones or None (the format's class says where they are). A MERGE
    format's tombstones count only when committed (``merge_table``: the tombstone table
    if it exists; ``committed_tags``: what their tags are ``in``); a rewrite format's are
    in the planned version's directory when ``readable`` says it has them."""
    values: dict[str, Any] = {"tombstones_from": None, "tombstone_now_ms": now}
    if tombstones.retention_ms(definition) is None or state is None:
        return values
    values["now_ms"] = now
    values["tombstones_from"] = tombstone_store(file_format).live_sql(
        TombstoneSource(
            select_list(definition), live_predicate(definition, now), state.get("location")
        ),
        merge_table,
        committed_tags,
        readable,
    )
    return values


def next_tombstones_sql(definition: Mapping[str, Any], candidates_sql: str) -> str:
    """The complete live set after this plan: the live ones no new tombstone replaces,
    and the new ones (parquet/orc write it into the next version)."""
    fresh = f"select {select_list(definition)} from ({candidates_sql}) as fresh"
    live = definition.get("tombstones_from")
    if not live:
        return fresh
    return (
        f"select {select_list(definition, 'kept.')} from ({live}) as kept "
        f"left anti join ({candidates_sql}) as c on {_key_match(definition, 'kept', 'c')} "
        f"union all {fresh}"
    )


def write_sql(location: str, file_format: str, tombstones_sql: str) -> str:
    """A version directory's tombstones as written: its live set."""
    target = sql_string_literal(tombstones.version_tombstone_dir(location))
    return f"insert overwrite directory {target} using {file_format} {tombstones_sql}"


def merge_table_sql(definition: Mapping[str, Any], table: str, file_format: str) -> str:
    typed = ", ".join(f"{c[0]} {c[1]}" for c in tombstones.columns(definition))
    return (
        f"create table if not exists {table} ({typed}, {tombstones.INVOCATION_COLUMN} string) "
        f"using {file_format}"
    )


def append_sql(definition: Mapping[str, Any], table: str, candidates_sql: str, tag: str) -> str:
    return (
        f"insert into {table} select {select_list(definition)}, {sql_string_literal(tag)} "
        f"from ({candidates_sql}) as c"
    )


def prepare_merge_table(
    run_sql: RunSql, definition: Mapping[str, Any], table: str, file_format: str
) -> None:
    """The tombstone table beside a MERGE table (created once), its expired rows dropped:
    best effort, since readers skip expired rows anyway and a concurrent append may
    refuse the delete (a later run retries)."""
    run_sql(merge_table_sql(definition, table, file_format))
    cutoff = cutoff_ms(definition, int(definition["now_ms"]))
    expired = f"{q(tombstones.DELETED_MS_COLUMN)} < {cutoff}"
    try:
        run_sql(f"delete from {table} where {expired}")
    except Exception as exc:  # noqa: BLE001 - expiry is retried by the next run
        logger.debug(f"mutable_table: tombstone expiry of {table} deferred: {exc}")


def apply(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    state: Any,
    file_format: str,
    candidates_sql: str,
    merge_table: str,
    invocation_id: str,
) -> dict[str, Any]:
    """The tombstones this plan leaves: ``sql`` (parquet/orc: the next version's live
    set), ``new`` (how many are new: a version is written for them even when no row
    changes) and, on Iceberg, ``branch_insert`` (the append the branch commit runs). On
    Delta they are appended here, before the MERGE, and ``new`` is 0."""
    if tombstones.retention_ms(definition) is None or state is None:
        return {"sql": None, "new": 0}
    return tombstone_store(file_format).apply(
        run_sql, definition, candidates_sql, merge_table, invocation_id
    )


def _new_count(run_sql: RunSql, candidates_sql: str) -> int:
    return int(run_sql(f"select count(*) from ({candidates_sql}) as c")[0][0])


def rollback_rewrite_sql(
    definition: Mapping[str, Any],
    file_format: str,
    kept_location: str,
    readable: Callable[[str], bool],
) -> Optional[str]:
    """parquet/orc: the complete set the rollback's version carries (none when the kept
    version has none); None without tombstones."""
    if tombstones.retention_ms(definition) is None:
        return None
    if readable(kept_location):
        source = path_relation_sql(file_format, tombstones.version_tombstone_dir(kept_location))
        return f"select {select_list(definition)} from {source}"
    return no_tombstones_sql(definition)


def rollback_merge(run_sql: RunSql, table: Optional[str], later_tags: Sequence[str]) -> None:
    """Delta and Iceberg: the tombstones written by commits after the kept version stop
    counting (Delta tags them with the invocation, Iceberg with the snapshot)."""
    if table is None or not later_tags:
        return
    tags = ", ".join(sql_string_literal(str(t)) for t in later_tags)
    run_sql(f"delete from {table} where {tombstones.INVOCATION_COLUMN} in ({tags})")


def rollback_merge_tags(
    file_format: str, history: Sequence[Mapping[str, Any]], version: int
) -> list[str]:
    """The tags of the tombstones written by the commits after ``version`` (a MERGE
    format's): what a rollback to it stops counting. ``history`` is newest first and
    holds ``version``."""
    store = merge_tombstones(file_format)
    tags: list[str] = []
    for entry in history:
        if int(entry["version"]) == int(version):
            break
        tag = store.tag_of(entry)
        if tag and tag not in tags:
            tags.append(str(tag))
    return tags


@dataclass(frozen=True)
class TombstoneSource:
    """What a plan's read of the live tombstones is made of: their columns, the live
    test at the plan's clock, and the version the plan reads (a rewrite format's)."""

    columns: str
    live: str
    location: Optional[str]


class RewriteTombstones:
    """parquet/orc: each version directory holds its complete live set
    (``_jammi_tombstones``), written before the commit that swaps the version in."""

    def __init__(self, file_format: str) -> None:
        self.file_format = file_format

    def live_sql(
        self,
        source: TombstoneSource,
        merge_table: Callable[[], Optional[str]],
        committed_tags: Callable[[], str],
        readable: Callable[[str], bool],
    ) -> Optional[str]:
        """The keys' live tombstones as the plan reads them, or None when none count."""
        if not readable(str(source.location)):
            return None
        found = path_relation_sql(
            self.file_format, tombstones.version_tombstone_dir(str(source.location))
        )
        return f"select {source.columns} from {found} where {source.live}"

    def apply(
        self,
        run_sql: RunSql,
        definition: Mapping[str, Any],
        candidates_sql: str,
        merge_table: str,
        invocation_id: str,
    ) -> dict[str, Any]:
        """The next version's complete live set, written with it by the commit."""
        new = _new_count(run_sql, candidates_sql)
        return {"sql": next_tombstones_sql(definition, candidates_sql), "new": new}


class MergeTombstones(RewriteTombstones):
    """A MERGE format: the tombstones are rows of ``<table>__jammi_tombstones``, each
    tagged; a row counts once its tag names a commit of the table."""

    def live_sql(
        self,
        source: TombstoneSource,
        merge_table: Callable[[], Optional[str]],
        committed_tags: Callable[[], str],
        readable: Callable[[str], bool],
    ) -> Optional[str]:
        table = merge_table()
        committed = committed_tags() if table is not None else ""
        if not committed:
            return None
        return (
            f"select {source.columns} from {table} where {source.live} and "
            f"{tombstones.INVOCATION_COLUMN} in ({committed})"
        )


class DeltaTombstones(MergeTombstones):
    """Tagged with the run's invocation id, appended before the MERGE: a run killed
    before its MERGE leaves rows whose tag no commit names."""

    def apply(
        self,
        run_sql: RunSql,
        definition: Mapping[str, Any],
        candidates_sql: str,
        merge_table: str,
        invocation_id: str,
    ) -> dict[str, Any]:
        prepare_merge_table(run_sql, definition, merge_table, self.file_format)
        run_sql(append_sql(definition, merge_table, candidates_sql, invocation_id))
        return {"sql": None, "new": 0}

    def tag_of(self, entry: Mapping[str, Any]) -> Optional[str]:
        """The tag of the tombstones a history entry's commit wrote."""
        return entry.get("invocation_id")

    @staticmethod
    def committed_tags(run_sql: RunSql, relation: str) -> str:
        """The invocations with a commit in the table's history, listed."""
        return committed_tags(delta_history(run_sql, relation, 1_000_000))


class IcebergTombstones(MergeTombstones):
    """Appended by the branch commit after the MERGE into the run's branch, tagged with
    the branch's snapshot (commit/branch_commit.py), whose id is the version."""

    def apply(
        self,
        run_sql: RunSql,
        definition: Mapping[str, Any],
        candidates_sql: str,
        merge_table: str,
        invocation_id: str,
    ) -> dict[str, Any]:
        new = _new_count(run_sql, candidates_sql)
        branch_insert = None
        if new > 0:
            prepare_merge_table(run_sql, definition, merge_table, self.file_format)
            branch_insert = append_sql(definition, merge_table, candidates_sql, HEAD_TAG)
        return {"sql": None, "new": new, "branch_insert": branch_insert}

    def tag_of(self, entry: Mapping[str, Any]) -> Optional[str]:
        return str(entry["version"])

    @staticmethod
    def committed_tags(run_sql: RunSql, relation: str) -> str:
        """A query of the snapshots in the table's current ancestry."""
        return committed_tags_sql(relation)


def tombstone_store(file_format: str) -> RewriteTombstones:
    """Where a table of ``file_format`` keeps its tombstones (a format dbt-jammi does not
    know keeps them as a rewrite format does)."""
    kind = table_format(file_format)
    if isinstance(kind, DeltaFormat):
        return DeltaTombstones(kind.name)
    if isinstance(kind, IcebergFormat):
        return IcebergTombstones(kind.name)
    return RewriteTombstones(kind.name)


def merge_tombstones(file_format: str) -> DeltaTombstones | IcebergTombstones:
    """A MERGE format's tombstones; only they are tagged (a rewrite format's live set is
    in each version)."""
    store = tombstone_store(file_format)
    if not isinstance(store, (DeltaTombstones, IcebergTombstones)):
        raise ValueError(f"file_format {file_format} keeps its tombstones in its versions")
    return store
