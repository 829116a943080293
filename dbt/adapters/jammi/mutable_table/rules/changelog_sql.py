"""The statements of a changelog (rules/changelog.py says why it is exactly once): the
events of a committed version, staged before a rewrite commit or appended from Delta's
change data feed after a MERGE.

Events are built from change rows in the change data feed's vocabulary
(``_change_type``: insert, update_preimage, update_postimage, delete;
``_commit_version``; the storage columns; ``tenant_id``), paired per key and version
into one event with the new values, the previous values and the kind (scd2: an
inserted interval opens, an updated one closes). A rewrite plan that carries each
changed row's stored values (``_jammi_prev_<n>``, changelog.previous_in_plan) gives one
event per change-set row instead, with nothing to pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Union

from dbt.adapters.jammi.common.validation import quote_identifier as q
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table.rules import changelog

_ROW_IDX = "cast(row_number() over ({window}) - 1 as bigint) as _row_idx"
_PRODUCED_AT = "cast(unix_micros(current_timestamp()) as bigint) as _produced_at"


def version_sql(version: Union[int, str]) -> str:
    """A version number, or (Iceberg, rules/changelog_iceberg.py) the SQL that reads it."""
    return str(int(version)) if isinstance(version, int) or str(version).isdigit() else version


def key_order(definition: Mapping[str, Any]) -> str:
    return ", ".join(["tenant_id", *(q(k) for k in definition["storage_key"])])


def _key_match(definition: Mapping[str, Any], left: str, right: str) -> str:
    keys = [f" and {left}.{q(k)} = {right}.{q(k)}" for k in definition["storage_key"]]
    return f"{left}.tenant_id <=> {right}.tenant_id" + "".join(keys)


def _event_select_list(definition: Mapping[str, Any]) -> str:
    names = [q(c[0]) for c in changelog.event_columns(definition)]
    return ", ".join([*names, "tenant_id"])


def events_sql(definition: Mapping[str, Any], raw_sql: str) -> str:
    """The events of ``raw_sql``'s change rows, paired per key and version."""
    key = ", ".join(["_commit_version", "tenant_id", *(q(k) for k in definition["storage_key"])])
    fields = "".join(f", '{c}', {q(c)}" for c in changelog.value_columns(definition))
    image = f"named_struct('_present', true{fields})"
    scd2 = definition.get("history") == "scd2"
    sources = ", ".join(
        f"cast({'' if s['source'] == 'key' else s['source'] + '.'}{q(s['column'])} "
        f"as {s['type']}) as {q(s['name'])}"
        for s in changelog.event_sources(definition)
    )
    return (
        "select case when before is null then "
        f"'{'open' if scd2 else 'insert'}' when after is null then 'delete' "
        f"else '{'close' if scd2 else 'update'}' end as change_kind, "
        f"cast(_commit_version as bigint) as table_version, {sources}, tenant_id "
        f"from (select {key}, "
        f"first(if(_change_type in ('insert', 'update_postimage'), {image}, null), true) as after, "
        f"first(if(_change_type in ('update_preimage', 'delete'), {image}, null), true) as before "
        f"from ({raw_sql}) as raw_changes group by {key}\n) as paired"
    )


def events_from_plan_sql(
    definition: Mapping[str, Any], change_set: str, version: Union[int, str]
) -> str:
    """The events of a change set that carries each changed row's stored values: one
    change-set row is one event (the same events as ``events_sql``)."""
    position = {c[0]: i for i, c in enumerate(definition["storage_columns"])}
    columns = []
    for s in changelog.event_sources(definition):
        if s["source"] == "key":
            value = q(s["column"])
        elif s["source"] == "after":
            value = f"case when _change <> 'delete' then {q(s['column'])} end"
        else:
            value = f"case when _change <> 'insert' then _jammi_prev_{position[s['column']]} end"
        columns.append(f"cast({value} as {s['type']}) as {q(s['name'])}")
    return (
        "select case _change when 'update' then 'update' when 'delete' then 'delete' "
        "else 'insert' end as change_kind, "
        f"cast({version_sql(version)} as bigint) as table_version, {', '.join(columns)}, tenant_id "
        f"from {change_set} where _change in ('insert', 'update', 'delete')"
    )


def stage_sql(
    definition: Mapping[str, Any],
    target: Optional[str],
    change_set: str,
    version: Union[int, str],
    staged_dir: str,
) -> str:
    """parquet/orc, before the commit: the events of ``change_set`` (planned against
    ``target``, None on the first run) as ``staged_dir``, the staged directory of
    ``version``. The previous values of updated and deleted rows come from the change set
    (changelog.previous_in_plan) or else from the stored table."""
    if changelog.previous_in_plan(definition):
        events = events_from_plan_sql(definition, change_set, version)
    else:
        events = events_sql(
            definition, _staged_changes_sql(definition, target, change_set, version)
        )
    return (
        f"insert overwrite directory {sql_string_literal(staged_dir)} using parquet select "
        f"{_ROW_IDX.format(window='order by ' + key_order(definition))}, {_PRODUCED_AT}, "
        f"{_event_select_list(definition)} from ({events}) as events"
    )


def _staged_changes_sql(
    definition: Mapping[str, Any],
    target: Optional[str],
    change_set: str,
    version: Union[int, str],
) -> str:
    """A change set's rows as change rows: new images from the set, previous images of
    updated and deleted keys from the stored table."""
    columns = [q(c[0]) for c in definition["storage_columns"]]
    new = (
        "select case _change when 'insert' then 'insert' else 'update_postimage' end "
        f"as _change_type, {version_sql(version)} as _commit_version, "
        f"{', '.join(columns)}, tenant_id from {change_set} where _change in ('insert', 'update')"
    )
    if target is None:
        return new
    stored = ", ".join(f"t.{c}" for c in columns)
    keys = "".join(f", {q(k)}" for k in definition["storage_key"])
    return (
        f"{new} union all select case c._change when 'update' then 'update_preimage' "
        f"else 'delete' end as _change_type, {version_sql(version)} as _commit_version, {stored}, "
        f"t.tenant_id from {target} as t join (select _change, tenant_id{keys} from "
        f"{change_set} where _change in ('update', 'delete')) as c "
        f"on {_key_match(definition, 't', 'c')}"
    )


def delta_table(relation: Any) -> str:
    """Quoted: Delta's grammar takes ``history`` (a fine model name) as a keyword."""
    return f"`{relation.schema}`.`{relation.identifier}`"


def delta_changes_sql(definition: Mapping[str, Any], relation: Any, start: int, end: int) -> str:
    """The change data feed of versions ``start`` to ``end`` as change rows."""
    columns = "".join(f" {q(c[0])}," for c in definition["storage_columns"])
    table = sql_string_literal(delta_table(relation))
    return (
        f"select _change_type, _commit_version,{columns} tenant_id "
        f"from table_changes({table}, {int(start)}, {int(end)})"
    )


def delta_publish_sql(definition: Mapping[str, Any], backing: str, raw_sql: str) -> str:
    """Delta: one append of every version's events above the topic's high-water mark,
    read inside the same transaction (a concurrent publish of them conflicts). Offset =
    Delta version + 1: Delta versions start at 0, offsets at 1."""
    window = f"partition by table_version order by {key_order(definition)}"
    return (
        f"insert into {backing} select cast(table_version + 1 as bigint) as _offset, "
        f"{_ROW_IDX.format(window=window)}, {_PRODUCED_AT}, {_event_select_list(definition)} "
        f"from ({events_sql(definition, raw_sql)}) as events "
        f"where table_version + 1 > (select coalesce(max(_offset), 0) from {backing})"
    )
