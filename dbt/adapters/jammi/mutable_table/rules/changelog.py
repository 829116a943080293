"""Config ``changelog``: a mutable table publishes its committed changes to a topic.

Every committed version of the table becomes one publish of the topic
``<model's topic-style name>.changes`` (registered in ``topics`` like any topic, with the
table as its relation, so ``topic_events(ref('the_table'))`` reads it). Its offset is
derived from the table version, which is what makes the publish happen exactly once:

- **parquet / orc**: the run writes the events of its change set (with the stored rows
  they replace) to a staged directory named after its version directory *before* the
  table commit, and attaches it as partition ``_offset = version`` after it. The
  metastore admits one partition per offset, so whoever attaches it first (the run, or
  the next run repairing a crash between commit and publish) publishes it, once.
- **delta**: the table keeps Delta's change data feed; every run publishes
  ``table_changes`` of the committed versions above the topic's high-water mark, as
  offset ``delta version + 1``, in one append that reads the topic (the topic is
  ``Serializable``: of two concurrent publishes of one version, one commits).
- **iceberg**: the run stages the events of its change set and records them inside its
  branch commit, numbered by the table's committed versions, and attaches them as
  partition ``_offset = n`` after the fast-forward (rules/changelog_iceberg.py).

Before planning, every run (and every re-plan) publishes what is committed and not yet
published, so the topic never misses a version nor gets one out of order. Versions
committed before ``changelog`` was turned on are not published: the table property
``SINCE_PROPERTY`` records the first version that is. On parquet / orc, a run that
published its version records it on the table (``PUBLISHED_PROPERTY``, with the run's
other properties after the publish), so the next run skips the repair's read of the
topic's partitions when the table is still at that version.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import require_bool
from dbt.adapters.jammi.engine.commit_conflicts import is_commit_conflict
from dbt.adapters.jammi.mutable_table import rule_columns
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from dbt.adapters.jammi.topic.definition import default_topic_name
from dbt.adapters.jammi.topic.publish import EVENT_COLUMNS
from dbt.adapters.jammi.topic.registration import is_already_exists
from dbt.adapters.jammi.topic.topic_formats import claim_partition_sql

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition


CHANGE_KIND_COLUMN = "change_kind"
TABLE_VERSION_COLUMN = "table_version"
PREVIOUS_PREFIX = "previous_"
CHANGES_SUFFIX = ".changes"
SINCE_PROPERTY = "jammi.changelog_since"
PUBLISHED_PROPERTY = "jammi.changelog_published"
STAGED_PREFIX = "changes_"
MAX_PUBLISH_ATTEMPTS = 10

logger = AdapterLogger("jammi")

RunSql = Callable[[str], Sequence[Sequence[Any]]]


class ChangelogPublishError(JammiValidationError):
    """Committed changes could not be published to the changelog topic."""


# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("changelog",)


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``changelog`` flag, validated against its columns."""
    enabled = validate_changelog(
        opts.get("changelog"), subject, draft.column_names, draft.value_columns
    )
    return {"changelog": bool(enabled)}


def validate_changelog(
    value: Any, subject: str, column_names: Sequence[str], value_columns: Sequence[str]
) -> bool:
    """Config ``changelog``: a bool; the event columns must not collide with the model's."""
    if value is None:
        return False
    enabled = require_bool(value, "changelog", subject)
    if not enabled:
        return False
    generated = {CHANGE_KIND_COLUMN, TABLE_VERSION_COLUMN}
    generated.update(PREVIOUS_PREFIX + c for c in value_columns)
    taken = sorted(generated.intersection(column_names))
    if taken:
        raise JammiValidationError(
            subject,
            f"column '{taken[0]}' is also a column of the changelog events "
            f"({CHANGE_KIND_COLUMN}, {TABLE_VERSION_COLUMN}, {PREVIOUS_PREFIX}<column>)",
            f"rename '{taken[0]}' in the model's select list, or turn changelog off",
        )
    return True


def validate_changelog_rebuild(changelog: bool, full_refresh: Any, subject: str) -> None:
    """A rebuild starts the table over: its history could not be published as changes."""
    if changelog and full_refresh is True:
        raise JammiValidationError(
            subject,
            "changelog: true cannot be combined with full_refresh: true (a rebuild from the "
            "model's output has no change history to publish)",
            "remove full_refresh from the model's config, or turn changelog off",
        )


def topic_name(model_name: str) -> str:
    """``orders_state`` -> ``orders.state.changes``: the topic-style name a topic model of
    that name would get by default, plus ``.changes``."""
    return default_topic_name(model_name) + CHANGES_SUFFIX


def event_sources(definition: Mapping[str, Any]) -> list[dict[str, str]]:
    """The event columns after kind and version, and how each is filled from a key's
    change rows paired into ``after`` / ``before`` structs: ``source`` is ``key``,
    ``after`` (the new value) or ``before`` (``previous_<column>``). ``_written_at``
    stays internal; a version column in ``rule_columns`` has its model's name
    (``changelog_name``)."""
    key = set(definition["storage_key"])
    stored = [c for c in definition["storage_columns"] if c[0] != WRITTEN_AT_COLUMN]
    # a version kept under its reserved name (rule_columns) is the model's column here
    named = {kept: changelog_name(model) for model, kept in rule_columns.aliases(definition)}
    sources = [
        {
            "name": named.get(c[0], c[0]),
            "type": c[1],
            "source": "key" if c[0] in key else "after",
            "column": c[0],
        }
        for c in stored
    ]
    sources.extend(
        {
            "name": PREVIOUS_PREFIX + named.get(c[0], c[0]),
            "type": c[1],
            "source": "before",
            "column": c[0],
        }
        for c in stored
        if c[0] not in key
    )
    return sources


def changelog_name(model_column: str) -> str:
    """The changelog's name of a version column kept under its reserved name: the
    model's, or ``source_<name>`` where a consumer's ``topic_events()`` adds a column of
    that name (``event_offset``, ``event_row_idx``, ...)."""
    return f"source_{model_column}" if model_column in EVENT_COLUMNS.values() else model_column


def event_columns(definition: Mapping[str, Any]) -> list[list[str]]:
    """The changelog topic's columns: kind, version, the storage columns (new values),
    then the previous values of the non-key columns."""
    columns = [[CHANGE_KIND_COLUMN, "string"], [TABLE_VERSION_COLUMN, "bigint"]]
    columns.extend([s["name"], s["type"]] for s in event_sources(definition))
    return columns


def value_columns(definition: Mapping[str, Any]) -> list[str]:
    """The non-key storage columns an event carries (new and previous values)."""
    return [s["column"] for s in event_sources(definition) if s["source"] == "after"]


def subject_of(definition: Mapping[str, Any]) -> str:
    return f"mutable_table '{definition['table_id']}'"


def previous_in_plan(definition: Mapping[str, Any]) -> bool:
    """Whether the change set carries every changed row's stored values
    (``_jammi_prev_<n>``, one per storage column), so that staging the changelog does not
    read the table again to find them: the rewrite formats' plans of history none
    without TTL (whose expired rows join the set without them)."""
    topic = definition.get("changelog_topic") or {}
    return (
        bool(topic)
        and table_format(topic["table_format"]).changelog_previous_in_plan
        and definition.get("history", "none") == "none"
        and not definition.get("ttl_ms")
    )


def first_version_of_new_table(file_format: str) -> int:
    """The version a table created with ``changelog: true`` starts at (its first publish):
    Delta counts versions from 0, the rewrite formats from 1."""
    return table_format(file_format).first_version


def staged_dir(topic_location: str, version_location: str) -> str:
    """Where a rewrite run stages the events of the version it is about to commit."""
    version_dir = version_location.rstrip("/").rsplit("/", 1)[-1]
    return f"{topic_location.rstrip('/')}/_staging/{STAGED_PREFIX}{version_dir}"


def attach_version(run_sql: RunSql, backing: str, version: int, staged: str) -> bool:
    """Attach a staged version as partition ``_offset = version``; False if it already
    was (by the run that committed it, or by another run repairing it)."""
    try:
        run_sql(claim_partition_sql(backing, version, staged))
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if not is_already_exists(str(exc)):
            raise
        return False
    return True


def publish_delta(
    run_sql: RunSql, publish_sql: str, subject: str, attempts: int = MAX_PUBLISH_ATTEMPTS
) -> None:
    """Run the Delta publish (it appends only versions above the topic's high-water
    mark, reading it in the same transaction) until it is not refused by a concurrent
    publish; a retry then finds those versions published and appends the rest."""
    last_error = ""
    for attempt in range(attempts):
        try:
            run_sql(publish_sql)
            return
        except Exception as exc:  # noqa: BLE001
            if not is_commit_conflict(str(exc)):
                raise
            last_error = str(exc).splitlines()[0]
            logger.info(f"{subject}: changelog publish met a concurrent one; retrying")
        time.sleep(min(0.05 * (attempt + 1), 0.5))
    raise ChangelogPublishError(
        subject,
        f"the changelog publish kept conflicting with concurrent publishes ({last_error})",
        "re-run the model: the table is committed, and the next run publishes its "
        "changes before doing anything else",
    )


def first_version(properties: Mapping[str, Any]) -> Optional[int]:
    """The first table version the changelog publishes (table property), if recorded."""
    value = properties.get(SINCE_PROPERTY)
    if value is None or str(value) == "":
        return None
    return int(value)


def published_mark(definition: Mapping[str, Any], location: Optional[str]) -> Optional[str]:
    """parquet / orc: the ``PUBLISHED_PROPERTY`` value of the version committed at
    ``location``, once it is published (``<version>@<topic's backing table>``: a topic
    created anew under the same table does not match); None for the other formats, a
    table without a changelog, or no committed version."""
    topic = definition.get("changelog_topic") or {}
    version = parse_version(location) if location else None
    if not topic or version is None or table_format(topic["table_format"]).applies_by_merge:
        return None
    return f"{version}@{topic['backing']}"


def marked_published(
    properties: Mapping[str, Any], definition: Mapping[str, Any], location: Optional[str]
) -> bool:
    """Whether the table records the version at ``location`` as published to its
    changelog's topic (``published_mark``): the run that committed it published it."""
    mark = published_mark(definition, location)
    return mark is not None and properties.get(PUBLISHED_PROPERTY) == mark
