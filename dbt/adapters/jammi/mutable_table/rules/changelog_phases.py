"""The changelog's phases in a run (rules/changelog.py says why the publish is exactly
once; docs/changelog_topics.md):

- ``check``, before anything is written: what refuses a changelog run;
- ``start`` / ``stop``, before the plan: the first version a changelog publishes,
  recorded on the table when it is turned on for an existing table, forgotten when it
  is turned off (turning it on again starts afresh);
- ``repair``, before every plan: what a run that stopped between its commit and its
  publish left unpublished (parquet / orc: not read when the table records its version
  as published, ``changelog.PUBLISHED_PROPERTY``);
- ``publish``, after the commit.

rules_service.py runs them; the statements are changelog_sql.py's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_iceberg, changelog_sql
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from dbt.adapters.jammi.topic.registration import is_not_found
from dbt.adapters.jammi.topic.registry_sql import REGISTRY_TABLE, name_owner_sql
from dbt.adapters.jammi.topic.topic_formats import offsets_from_partitions

RunSql = Callable[[str], Sequence[Sequence[Any]]]

logger = AdapterLogger("jammi")


def subject_of(definition: Mapping[str, Any]) -> str:
    return f"mutable_table '{definition['table_id']}'"


def check_format(definition: Mapping[str, Any], file_format: str) -> None:
    if not table_format(file_format).keeps_changes:
        raise JammiValidationError(
            subject_of(definition),
            f"changelog: true needs file_format delta, iceberg, parquet or orc ({file_format} "
            "keeps no change history dbt-jammi can read). Nothing was written.",
            "use one of those formats, or turn changelog off",
        )


def name_owner(run_sql: RunSql, registry: str, name: str) -> Optional[str]:
    """The model whose topic holds ``name``, or None (a missing registry holds none)."""
    try:
        rows = run_sql(name_owner_sql(registry, name))
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if is_not_found(str(exc)):
            return None
        raise
    return str(rows[0][0]) if rows else None


def check_name_free(
    run_sql: RunSql, definition: Mapping[str, Any], registry: str, schema: str
) -> None:
    name = changelog.topic_name(definition["table_id"])
    owner = name_owner(run_sql, registry, name)
    if owner is not None:
        raise JammiValidationError(
            subject_of(definition),
            f"its changelog topic name '{name}' is already used by model '{owner}' in "
            f"schema {schema}. Nothing was written.",
            "give that topic model another topic_name, or this model another name",
        )


def check_columns(
    definition: Mapping[str, Any], topic: Mapping[str, Any], columns: Sequence[Any]
) -> None:
    """A changelog's columns are fixed once published."""
    if json.dumps(topic["columns"]) != json.dumps(columns):
        raise JammiValidationError(
            subject_of(definition),
            f"its changelog topic {topic['name']} was published with the columns "
            f"{json.dumps(topic['columns'])}; the table's changes now have "
            f"{json.dumps(columns)}. Nothing was written.",
            "a changelog's columns are fixed once published: keep the table's columns, "
            "or turn changelog off before changing them",
        )


def check_no_earlier_events(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    topic: Mapping[str, Any],
    backing: str,
    registry: str,
) -> None:
    """A table created anew while its changelog holds an earlier table's events would
    restart its versions at 1, colliding with their offsets."""
    held = int(run_sql(f"select count(*) from {backing}")[0][0])
    if held > 0:
        raise JammiValidationError(
            subject_of(definition),
            f"the table is created anew, but its changelog topic {topic['name']} "
            f"({backing}) holds {held} event(s) of an earlier table of that name; new "
            "versions would collide with their offsets. Nothing was written.",
            f"drop {backing} and delete its row from {registry} (name = '{topic['name']}'), "
            "or give the model a new name",
        )


def check(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    relation: Any,
    state: Any,
    file_format: str,
    find_topic: Callable[[], Optional[dict[str, Any]]],
    columns_of: Callable[[str], Any],
    backing_of: Callable[[Mapping[str, Any]], str],
) -> dict[str, Any]:
    """Everything that refuses a changelog run, read before anything is written: the
    format, a topic name another model has taken, a changed set of columns, a table
    created anew while its changelog holds an earlier table's events. ``topic``: the
    table's registered changelog topic (``find_topic``), or None; ``writes``: whether
    preparing it writes. ``columns_of(name)``: the event columns as a topic of that name
    records them; ``backing_of(topic)``: its backing table."""
    topic = None
    if definition.get("changelog"):
        check_format(definition, file_format)
        topic = find_topic()
        registry = f"{relation.schema}.{REGISTRY_TABLE}"
        if topic is None:
            check_name_free(run_sql, definition, registry, relation.schema)
        else:
            check_columns(definition, topic, columns_of(topic["name"]))
            if state is None:
                check_no_earlier_events(run_sql, definition, topic, backing_of(topic), registry)
    return {"topic": topic, "writes": preparation_writes(definition, state, topic)}


def stage_step(
    definition: Mapping[str, Any], target: Optional[str], change_set: str, location: str
) -> dict[str, Any]:
    """parquet/orc, a step of the commit before its claim: the events of ``change_set``
    (planned against ``target``, None on the first run) staged for the version at
    ``location``, with the staged directory to remove if the commit fails."""
    version = int(parse_version(location) or 0)
    staged = changelog.staged_dir(definition["changelog_topic"]["location"], location)
    sql = changelog_sql.stage_sql(definition, target, change_set, version, staged)
    return {"sql": sql, "undo_paths": [staged]}


def preparation_writes(definition: Mapping[str, Any], state: Any, topic: Any) -> bool:
    """Whether preparing the changelog writes: registering its topic, or starting or
    stopping it on an existing table's properties."""
    if state is None:
        return bool(definition.get("changelog"))
    since = state["properties"].get(changelog.SINCE_PROPERTY)
    if definition.get("changelog"):
        return topic is None or since is None
    return since is not None


def delta_table_version(run_sql: RunSql, relation: Any) -> int:
    rows = run_sql(f"describe history {changelog_sql.delta_table(relation)} limit 1")
    return int(rows[0][0])


def stop(run_sql: RunSql, relation: Any, state: Any) -> None:
    """Turned off: the table forgets its first version and its last published one."""
    if state is not None and state["properties"].get(changelog.SINCE_PROPERTY) is not None:
        run_sql(
            f"alter table {relation} unset tblproperties if exists "
            f"('{changelog.SINCE_PROPERTY}', '{changelog.PUBLISHED_PROPERTY}')"
        )


def start(run_sql: RunSql, relation: Any, state: Any, file_format: str) -> int:
    """The first version the changelog publishes: recorded on the table when the
    changelog is turned on for an existing table (its next committed version), the
    table's first version when it is new."""
    if state is None:
        return changelog.first_version_of_new_table(file_format)
    since = changelog.first_version(state["properties"])
    if since is not None:
        return since
    prop = changelog.SINCE_PROPERTY
    if file_format == "delta":
        since = delta_table_version(run_sql, relation) + 1
        run_sql(
            f"alter table {relation} set tblproperties "
            f"('delta.enableChangeDataFeed' = 'true', '{prop}' = '{since}')"
        )
    elif file_format == "iceberg":
        created = state["properties"].get(changelog_iceberg.CREATED_BY_PROPERTY)
        since = changelog_iceberg.next_offset(run_sql, str(relation), created)
        run_sql(f"alter table {relation} set tblproperties ('{prop}' = '{since}')")
    else:
        # an adopted table's location is not a version directory: its first is 1
        since = (parse_version(state["location"]) or 0) + 1
        run_sql(f"alter table {relation} set tblproperties ('{prop}' = '{since}')")
    state["properties"][prop] = str(since)
    return since


def publish(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    relation: Any,
    location: Optional[str],
) -> None:
    """After a commit. parquet/orc: attach the events staged for ``location`` (the
    committed version directory) as offset = version. delta: append the change data feed
    of every committed version above the topic's high-water mark. iceberg: attach every
    committed version the topic lacks (rules/changelog_iceberg.py)."""
    topic = definition["changelog_topic"]
    if topic.get("table_format") == "iceberg":
        changelog_iceberg.publish(run_sql, definition, str(relation))
        return
    if topic["file_format"] != "delta":
        version = parse_version(location or "")
        if location is None or version is None:
            raise ValueError(f"a changelog publish needs a committed version, not {location!r}")
        staged = changelog.staged_dir(topic["location"], location)
        changelog.attach_version(run_sql, topic["backing"], version, staged)
        return
    backing = topic["backing"]
    published = int(run_sql(f"select coalesce(max(_offset), 0) from {backing}")[0][0])
    start_at = max(published, int(topic["since"]))
    current = delta_table_version(run_sql, relation)
    if start_at <= current:
        raw = changelog_sql.delta_changes_sql(definition, relation, start_at, current)
        publish_sql = changelog_sql.delta_publish_sql(definition, backing, raw)
        changelog.publish_delta(run_sql, publish_sql, subject_of(definition))


def repair(run_sql: RunSql, definition: Mapping[str, Any], relation: Any, state: Any) -> None:
    """Before a plan from ``state``: publish what is committed and not published yet (a
    run that stopped between its commit and its publish)."""
    topic = definition.get("changelog_topic")
    if not topic or state is None:
        return
    if state["file_format"] == "delta":
        publish(run_sql, definition, relation, None)
        return
    if state["file_format"] == "iceberg":
        for offset in changelog_iceberg.publish(run_sql, definition, str(relation)):
            logger.info(
                f"{subject_of(definition)}: published version {offset} to its changelog "
                "(its run stopped after the commit)"
            )
        return
    version = parse_version(state["location"]) if state.get("location") else None
    if version is None or version < int(topic["since"]):
        return
    if changelog.marked_published(state["properties"], definition, state["location"]):
        return  # the run that committed it published it, and recorded so after
    published = offsets_from_partitions(run_sql(f"show partitions {topic['backing']}"))
    if version not in published:
        publish(run_sql, definition, relation, state["location"])
        logger.info(
            f"{subject_of(definition)}: published version {version} to its changelog (its "
            "run stopped after the commit)"
        )
