"""Iceberg: a changelog published exactly once, numbered by the table's own commits
(docs/changelog_topics.md#iceberg).

Iceberg's snapshot ids are not ordered, so an Iceberg table's changelog numbers its
versions itself: the n-th committed version that changed rows is offset ``n`` (its
events' ``table_version`` too). Every commit that changes rows goes through the run's
branch (commit/branch_commit.py); after its MERGE into the branch the run appends two
records, tagged with the branch's snapshot:

1. the events of its change set, staged in the topic's ``_staging`` directory under a
   name that carries the snapshot id (no reader of the topic sees them);
2. a row of ``<table>__jammi_changelog``: (tag, offset, staged directory), where offset
   is one more than the highest offset of the committed rows.

A row is *committed* when its tag is a snapshot of the table's current ancestry: the
fast-forward that publishes the branch commits it with the table's rows. The table's
first version is a ``CREATE TABLE ... AS SELECT``, not a branch: its row's tag is a run
id the CREATE records as the table property ``CREATED_BY_PROPERTY``, so it counts exactly
when that CREATE committed. The fast-forward is refused whenever another run committed
after the branch was made, so the committed offsets are 1, 2, 3, ... with none repeated.

Publishing stores each committed row's staged events as the topic's offset ``n``, in
offset order: after the commit, and before every plan (what a run killed between its
commit and its publish left). On a parquet topic the staged directory is attached as the
partition ``_offset = n``, and the metastore admits one partition per offset. On an
Iceberg topic (the topic of an Iceberg table; the only kind an Iceberg catalog service
keeps) one MERGE stores the staged events as ``n`` unless rows of ``n`` exist, validated
under serializable isolation (topic/topic_formats.py ``iceberg_publish_sql``): of two
publishes of ``n`` one commits and the other finds ``n`` stored. Either way each version
is published once.

A row counts while its snapshot is in the table's history, which ``expire_snapshots``
empties: that combination is refused (mutable_table/iceberg_support.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine.commit_conflicts import run_claim
from dbt.adapters.jammi.mutable_table.commit.branch_commit import HEAD_TAG, committed_tags_sql
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_sql
from dbt.adapters.jammi.topic.registration import is_not_found
from dbt.adapters.jammi.topic.topic_formats import (
    OFFSET_TAKEN,
    iceberg_publish_sql,
    offsets_from_partitions,
    topic_format,
)

RunSql = Callable[[str], Sequence[Sequence[Any]]]

RECORDS_SUFFIX = "__jammi_changelog"
CREATED_BY_PROPERTY = "jammi.changelog_created_by"
CREATED_PREFIX = "create_"

logger = AdapterLogger("jammi")


def records_table(relation: str) -> str:
    """The changelog's records beside ``relation`` (``schema.table``)."""
    return relation + RECORDS_SUFFIX


def records_table_sql(relation: str) -> str:
    return (
        f"create table if not exists {records_table(relation)} "
        "(tag string, _offset bigint, staged string) using iceberg"
    )


def created_tag(run_id: str) -> str:
    """The tag of a table's first version: the run id its CREATE records."""
    return CREATED_PREFIX + run_id


def _committed_filter(relation: str, created: Optional[str]) -> str:
    first = f" or tag = {sql_string_literal(created)}" if created else ""
    return f"tag in ({committed_tags_sql(relation)}){first}"


def committed_sql(relation: str, created: Optional[str]) -> str:
    """The committed rows: (offset, staged directory)."""
    return (
        f"select _offset, staged from {records_table(relation)} "
        f"where {_committed_filter(relation, created)}"
    )


def next_offset_sql(relation: str, created: Optional[str]) -> str:
    """One more than the highest committed offset: read inside the run's branch commit,
    after the branch was made (a commit since then refuses the run's fast-forward)."""
    return (
        f"(select coalesce(max(_offset), 0) + 1 from {records_table(relation)} "
        f"where {_committed_filter(relation, created)})"
    )


def _staged(topic: Mapping[str, Any], name: str) -> str:
    return changelog.staged_dir(topic["location"], f"iceberg_{name}")


def branch_records(definition: Mapping[str, Any], relation: str, change_set: str) -> list[str]:
    """The appends the branch commit runs after the MERGE into the branch: the events of
    ``change_set`` (planned against ``relation``), staged; then their row, tagged."""
    topic = definition["changelog_topic"]
    offset = next_offset_sql(relation, topic.get("created_tag"))
    staged = _staged(topic, HEAD_TAG)
    stage = changelog_sql.stage_sql(definition, relation, change_set, offset, staged)
    record = (
        f"insert into {records_table(relation)} select {sql_string_literal(HEAD_TAG)}, "
        f"{offset}, {sql_string_literal(staged)}"
    )
    return [stage, record]


def create_steps(definition: Mapping[str, Any], relation: str, change_set: str) -> list[dict]:
    """The table's first version, before its CREATE: the records table, the events of
    the first batch staged as offset 1, and their row, tagged with the CREATE's run id."""
    topic = definition["changelog_topic"]
    tag = topic["created_tag"]
    staged = _staged(topic, tag)
    first = changelog.first_version_of_new_table("iceberg")
    return [
        {"sql": records_table_sql(relation)},
        {"sql": changelog_sql.stage_sql(definition, None, change_set, str(first), staged)},
        {
            "sql": f"insert into {records_table(relation)} values "
            f"({sql_string_literal(tag)}, {first}, {sql_string_literal(staged)})"
        },
    ]


def _committed(run_sql: RunSql, relation: str, created: Optional[str]) -> list[tuple[int, str]]:
    try:
        rows = run_sql(committed_sql(relation, created))
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if is_not_found(str(exc)):
            return []
        raise
    return sorted((int(r[0]), str(r[1])) for r in rows)


def next_offset(run_sql: RunSql, relation: str, created: Optional[str]) -> int:
    """Where a changelog turned on for an existing table starts."""
    committed = _committed(run_sql, relation, created)
    return committed[-1][0] + 1 if committed else 1


def publish(run_sql: RunSql, definition: Mapping[str, Any], relation: str) -> list[int]:
    """Attach every committed version the topic lacks, in offset order (each at most
    once: a concurrent attach of the same offset wins, and this one moves on). The
    offsets this call attached."""
    topic = definition["changelog_topic"]
    committed = _committed(run_sql, relation, topic.get("created_tag"))
    if not committed:
        return []
    if topic_format(topic["file_format"]).offsets_in_rows:
        return _store_versions(run_sql, topic, committed)
    published = set(offsets_from_partitions(run_sql(f"show partitions {topic['backing']}")))
    attached = []
    for offset, staged in committed:
        if offset in published:
            continue
        if changelog.attach_version(run_sql, topic["backing"], offset, staged):
            attached.append(offset)
        else:
            _check_attached_here(run_sql, definition, offset, staged)
    return attached


def _store_versions(
    run_sql: RunSql, topic: Mapping[str, Any], committed: Sequence[tuple[int, str]]
) -> list[int]:
    """An Iceberg topic: store every committed version above its newest offset, in
    order (versions are published in offset order, so the newest stored one says which
    are published). The offsets this call stored."""
    backing = topic["backing"]
    newest = int(run_sql(f"select coalesce(max(_offset), 0) from {backing}")[0][0])
    stored = []
    for offset, staged in committed:
        if offset > newest and store_version(run_sql, backing, topic["columns"], offset, staged):
            stored.append(offset)
    return stored


def store_version(
    run_sql: RunSql,
    backing: str,
    columns: Sequence[str],
    offset: int,
    staged: str,
    attempts: int = changelog.MAX_PUBLISH_ATTEMPTS,
) -> bool:
    """Store the events staged in ``staged`` as offset ``offset`` of an Iceberg topic;
    False if it was already stored (by another run repairing it). A commit refused by
    a concurrent one is tried again, and then either commits or finds it stored. The
    staged files are read through a temporary view: ``parquet.`<dir>` `` resolves only
    in the session catalog, and an Iceberg catalog service may be the default one."""
    source = f"jammi_changelog_{int(offset)}_{uuid.uuid4().hex[:12]}"
    run_sql(
        f"create temporary view {source} using parquet options (path {sql_string_literal(staged)})"
    )
    statement = iceberg_publish_sql(backing, source, columns, offset)
    try:
        stored, last = run_claim(run_sql, statement, OFFSET_TAKEN, attempts)
    finally:
        run_sql(f"drop view if exists {source}")
    if stored is not None:
        return stored
    raise changelog.ChangelogPublishError(
        f"changelog topic {backing}",
        f"version {offset} kept meeting concurrent commits ({last})",
        "re-run the model: the next run publishes every committed version it lacks",
    )


def partition_location(rows: Sequence[Sequence[Any]]) -> Optional[str]:
    """The ``Location`` of ``DESCRIBE FORMATTED ... PARTITION`` rows."""
    for row in rows:
        if str(row[0]).strip() == "Location":
            return str(row[1]).strip()
    return None


def _check_attached_here(
    run_sql: RunSql, definition: Mapping[str, Any], offset: int, staged: str
) -> None:
    """An offset another publish attached first must hold these events: another
    version's there means two versions were numbered alike, which happens only when the
    snapshots holding the changelog's records left the table's history."""
    topic = definition["changelog_topic"]
    rows = run_sql(f"describe formatted {topic['backing']} partition (_offset={int(offset)})")
    found = partition_location(rows) or ""
    if found.rstrip("/").rsplit("/", 1)[-1] != staged.rstrip("/").rsplit("/", 1)[-1]:
        raise changelog.ChangelogPublishError(
            f"mutable_table '{definition['table_id']}'",
            f"its changelog version {offset} is already published from {found}, not from "
            f"{staged}: the table's snapshots that committed its changelog records were "
            "expired, so two versions were numbered alike. The table itself is committed",
            f"publish the events in {staged} by hand at a new offset, and expire only "
            "snapshots older than the changelog's newest version",
        )
