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

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.rules import changelog, changelog_sql
from dbt.adapters.jammi.mutable_table.rules.changelog import subject_of
from dbt.adapters.jammi.mutable_table.rules.changelog_feeds import changelog_feed, feed_of
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from dbt.adapters.jammi.topic.registration import is_not_found
from dbt.adapters.jammi.topic.registry_sql import REGISTRY_TABLE, name_owner_sql

RunSql = Callable[[str], Sequence[Sequence[Any]]]


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


def stop(run_sql: RunSql, relation: Any, state: Any) -> None:
    """Turned off: the table forgets its first version and its last published one."""
    if state is not None and state["properties"].get(changelog.SINCE_PROPERTY) is not None:
        run_sql(
            f"alter table {relation} unset tblproperties if exists "
            f"('{changelog.SINCE_PROPERTY}', '{changelog.PUBLISHED_PROPERTY}')"
        )


def start(run_sql: RunSql, relation: Any, state: Any, file_format: str) -> int:
    """The first version the changelog publishes: recorded on the table when the
    changelog is turned on for an existing table (its next committed version, as its
    feed counts them: rules/changelog_feeds.py), the table's first version when it is
    new."""
    if state is None:
        return changelog.first_version_of_new_table(file_format)
    since = changelog.first_version(state["properties"])
    if since is not None:
        return since
    since = changelog_feed(file_format).start(run_sql, relation, state)
    state["properties"][changelog.SINCE_PROPERTY] = str(since)
    return since


def publish(
    run_sql: RunSql,
    definition: Mapping[str, Any],
    relation: Any,
    location: Optional[str],
) -> None:
    """After a commit, the committed version to the topic, as the table's feed reads it
    (rules/changelog_feeds.py): ``location`` is the committed version directory of a
    rewrite format."""
    feed_of(definition["changelog_topic"]).publish(run_sql, definition, relation, location)


def repair(run_sql: RunSql, definition: Mapping[str, Any], relation: Any, state: Any) -> None:
    """Before a plan from ``state``: publish what is committed and not published yet (a
    run that stopped between its commit and its publish)."""
    topic = definition.get("changelog_topic")
    if not topic or state is None:
        return
    feed_of(topic).repair(run_sql, definition, relation, state)
