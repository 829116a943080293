{#-
  SCD Type 2 change-set planner (history: scd2). One query shared by both appliers.

  Output: one row per storage row that must change, keyed by (tenant_id, primary key,
  valid_from), with the storage columns, tenant_id and _change in
  ('insert', 'update', 'delete'). Closing an interval is an 'update' of its valid_to,
  opening one is an 'insert', splitting one is both.

  Method (docs/scd2.md): the batch's change events and the stored rows of the touched
  keys are tagged, unioned and shuffled ONCE by the effective key (tenant_id, primary
  key); everything after that is per key, in that partitioning (Spark's
  HashPartitioning(keys) satisfies every `partition by keys, x` / `group by keys, x`
  below, so nothing is shuffled again). Per key: the batch is deduplicated and checked,
  the stored rows become the stored timeline (each interval's start, plus a "deleted"
  point where an interval ends without a successor), one point per time merges batch
  and stored points (group by, not a join), the batch points that change nothing are
  dropped, valid_to is recomputed with lead() over what remains, and each point is
  compared with the stored row that starts at it (carried through the merge), which
  gives the change.
-#}

{% macro get_scd2_change_set_sql(definition, source_relation, target_relation, tenant=none, scan_target_once=false) -%}
  {{ return(adapter.dispatch('get_scd2_change_set_sql', 'dbt')(
      definition, source_relation, target_relation, tenant, scan_target_once)) }}
{%- endmacro %}


{#- a.tenant_id <=> b.tenant_id and a.k1 = b.k1 and ... (primary keys are never NULL) -#}
{% macro scd2_key_match_clause(plan, left, right) -%}
  {{ left }}.{{ plan.tenant_column }} <=> {{ right }}.{{ plan.tenant_column }}
  {%- for k in plan.key_columns %} and {{ left }}.{{ k }} = {{ right }}.{{ k }}{% endfor %}
{%- endmacro %}


{#- tenant_id, k1, k2 -#}
{% macro scd2_key_list(plan, prefix='') -%}
  {{ prefix }}{{ plan.tenant_column }}{% for k in plan.key_columns %}, {{ prefix }}{{ k }}{% endfor %}
{%- endmacro %}


{#- the stored rows a run may change (mutable_target_scope_clause: the bound tenant's,
    every tenant's with tenant_from, else the shared ones), in the planner's shape -#}
{% macro scd2_target_rows_clause(plan, definition, target_relation, tenant) -%}
  {%- if target_relation is none -%}
    select cast(null as string) as {{ plan.tenant_column }},
      {%- for c in plan.storage_columns if c.role == 'key' %} cast(null as {{ c.type }}) as {{ c.quoted }},{% endfor %}
      cast(null as {{ plan.interval_type }}) as _vf, cast(null as {{ plan.interval_type }}) as _vt
      {%- for c in plan.value_columns %}, cast(null as {{ plan.value_types[loop.index0] }}) as {{ c }}{% endfor %}
    where 1 = 0
  {%- else -%}
    select {{ scd2_key_list(plan) }}, {{ plan.valid_from }} as _vf, {{ plan.valid_to }} as _vt
      {%- for c in plan.value_columns %}, {{ c }}{% endfor %}
    from {{ target_relation }}
    where {{ mutable_target_scope_clause(definition, tenant) }}
  {%- endif -%}
{%- endmacro %}


{#- lag() of the state before each point (over window key_timeline) -#}
{% macro scd2_lag_columns(plan) -%}
  lag(_is_delete) over key_timeline as _prev_is_delete
  {%- for c in plan.track_columns %},
  lag({{ c }}) over key_timeline as `_prev_{{ loop.index }}`
  {%- endfor %}
{%- endmacro %}


{#- true for a point that stays on the timeline: stored or replacing a stored one, or a
    batch row that differs from the row before it (or follows a delete / nothing), or a
    batch delete that follows a row -#}
{% macro scd2_kept_clause(plan) -%}
  (not _new_wins
    or _has_old
    or (not _is_delete and not (
      coalesce(not _prev_is_delete, false)
      {%- for c in plan.track_columns %}
      and {{ mutable_same_value(c, '`_prev_' ~ loop.index ~ '`', plan.track_types[loop.index0]) }}
      {%- endfor %}))
    or (_is_delete and coalesce(not _prev_is_delete, false)))
{%- endmacro %}


{#- `scan_target_once` is part of the dispatched signature (an override may use it);
    this planner reads the stored rows once either way: they enter the one shuffle once -#}
{% macro default__get_scd2_change_set_sql(definition, source_relation, target_relation, tenant=none, scan_target_once=false) -%}
{%- set plan = adapter.mutable_planner(definition).scd2(run_started_at) -%}
{%- set tenant_col = plan.tenant_column -%}
{%- set keys = scd2_key_list(plan) -%}
{%- set version_expr = mutable_version_expr(definition) if plan.version_column else 'cast(null as bigint)' -%}
{%- set tenant_expr = mutable_tenant_expr(definition, tenant) -%}
{%- set valid_from_name = plan.valid_from | replace('`', '') -%}
{%- set key_text -%}
  concat_ws(', '
    {%- for k in plan.key_columns %}, concat({{ adapter.sql_string(k | replace('`', '') ~ '=') }}, coalesce(cast({{ k }} as string), 'NULL')){% endfor %},
    concat('tenant_id=', coalesce({{ tenant_col }}, 'NULL')))
{%- endset -%}
{#- the columns a timeline point carries from the merge on: its state (values,
    _is_delete), how the merge decided it, and the stored row starting at it -#}
{%- set point_columns -%}
  {{ keys }}, _vf
  {%- for c in plan.value_columns %}, {{ c }}{% endfor %},
  _is_delete, _new_wins, _has_old, _old_is_delete, _has_row, _row_vt
  {%- for c in plan.value_columns %}, `_old_{{ loop.index }}`{% endfor %}
{%- endset -%}
with

batch_rows as (
  {#- the model's output as change events at their effective time #}
  select
    {{ tenant_expr }} as {{ tenant_col }},
    {%- for k in plan.key_columns %}
    {{ k }},
    {%- endfor %}
    {% if plan.effective_time_column %}cast({{ plan.effective_time_column }} as {{ plan.interval_type }}){% else %}{{ plan.run_time }}{% endif %} as _vf,
    {%- for c in plan.value_columns %}
    {{ c }},
    {%- endfor %}
    {#- a truncate_when model's batch: each truncate is a delete of every key at its
        effective time (rules/truncates.py) #}
    {% if plan.delete_when %}coalesce(({{ plan.delete_when }}), false){% else %}false{% endif %}{{ ' or _jammi_truncated' if definition.truncate_when }} as _is_delete,
    {{ version_expr }} as _version
  from {{ source_relation }}
),

batch_checked as (
  select * from batch_rows
  where assert_true(_vf is not null, concat(
    'dbt-jammi scd2: a row of the batch has NULL {{ valid_from_name }} (', {{ key_text }},
    '); output the effective time for every row')) is null
),

target_rows as (
  {{ scd2_target_rows_clause(plan, definition, target_relation, tenant) }}
),

stored_rows as (
  {%- if plan.hard_deletes %}
  {#- hard_deletes: every open key of the scope is touched, so every stored row enters
      the shuffle; the keys left untouched are dropped after it (points) #}
  select * from target_rows
  {%- else %}
  {#- the stored rows of the keys the batch touches (a semi join; a broadcast of the
      batch's keys when the batch is small) #}
  select t.* from target_rows t
  left semi join batch_rows b on {{ scd2_key_match_clause(plan, 't', 'b') }}
  {%- endif %}
),

key_rows as (
  {#- THE shuffle: batch rows and stored rows, tagged, distributed by the effective key.
      A delete's other columns do not matter (identical duplicates collapse below). #}
  select * from (
    select {{ keys }}, _vf, cast(null as {{ plan.interval_type }}) as _vt
      {%- for c in plan.value_columns %},
      case when _is_delete then null else {{ c }} end as {{ c }}
      {%- endfor %},
      _is_delete, _version, false as _stored
    from batch_checked
    union all
    select {{ keys }}, _vf, _vt
      {%- for c in plan.value_columns %}, {{ c }}{% endfor %},
      false as _is_delete, {{ version_expr }} as _version, true as _stored
    from stored_rows
  ) distribute by {{ keys }}
),

batch_events as (
  {#- per key and effective time: the highest version of the batch (all its rows without
      version_column); a remaining conflict fails the query. Stored rows pass through. #}
  select {{ keys }}, _vf, _vt
    {%- for c in plan.value_columns %}, {{ c }}{% endfor %}, _is_delete, _version, _stored
  from (
    select *, count(*) over (partition by {{ keys }}, _vf, _stored) as _rows_at_vf
    from (
      select *, rank() over (partition by {{ keys }}, _vf, _stored order by _version desc nulls last) as _rank
      from (select distinct * from key_rows)
    )
    where _rank = 1 or _stored
  )
  where assert_true(_rows_at_vf = 1 or _stored, concat(
    'dbt-jammi scd2: the batch has different rows for one key at the same {{ valid_from_name }} (',
    {{ key_text }}, ', {{ valid_from_name }}=', cast(_vf as string), '); ',
    {%- if plan.version_column %}
    'they also share the highest {{ plan.version_column | replace("`", "") }}; make the versions differ or deduplicate the model output'
    {%- else %}
    'deduplicate the model output or set version_column so the highest version wins'
    {%- endif %})) is null
),

points as (
  {#- the timeline's points: a batch event is one; a stored row is its start, plus a
      "deleted" point at its valid_to when no stored interval starts there, plus (with
      hard_deletes) a delete at the run's time when it is open and its key is absent
      from the batch. _row marks a stored row's start, which carries that row's
      valid_to and values on to the diff #}
  select {{ keys }}, p._vf, p._new, p._is_delete, p._row,
    case when p._row then _vt end as _row_vt
    {%- for c in plan.value_columns %},
    case when p._row or not _stored then {{ c }} end as {{ c }}
    {%- endfor %},
    case when p._row or not _stored then _version end as _version
  from (
    select *,
      min(case when _stored then _vf end) over (partition by {{ keys }} order by _vf, _stored
        rows between 1 following and unbounded following) as _next_stored_vf
      {%- if plan.hard_deletes %},
      bool_or(not _stored) over key_rows_all as _key_in_batch,
      bool_or(_stored and _vt is null) over key_rows_all as _key_open
      {%- endif %}
    from batch_events
    {%- if plan.hard_deletes %}
    window key_rows_all as (partition by {{ keys }} order by _vf, _stored
      rows between unbounded preceding and unbounded following)
    {%- endif %}
  ) as e
  lateral view explode(filter(array(
      named_struct('_vf', _vf, '_is_delete', _is_delete, '_new', not _stored, '_row', _stored),
      named_struct('_vf', case when _stored and _vt is not null and not (_next_stored_vf <=> _vt) then _vt end,
                   '_is_delete', true, '_new', false, '_row', false)
      {%- if plan.hard_deletes %},
      named_struct('_vf', case when _stored and _vt is null and not _key_in_batch then {{ plan.run_time }} end,
                   '_is_delete', true, '_new', true, '_row', false)
      {%- endif %}
    ), x -> x._vf is not null)) points as p
  {%- if plan.hard_deletes %}
  where _key_in_batch or _key_open
  {%- endif %}
),

merged_points as (
  {#- one point per key and time (a batch point and a stored one at the same time meet
      in one group, not in a join); a batch point replaces a stored one unless
      version_column says the stored version is newer or equal #}
  {%- set new_wins -%}
    (_has_new and (not _has_old or _old_is_delete or _new_version is null
      or _old_version is null or _new_version > _old_version))
  {%- endset %}
  select {{ keys }}, _vf
    {%- for c in plan.value_columns %},
    case when _new_wins then `_new_{{ loop.index }}` else `_old_{{ loop.index }}` end as {{ c }}
    {%- endfor %},
    case when _new_wins then _new_is_delete else _old_is_delete end as _is_delete,
    _new_wins, _has_old, _old_is_delete, _has_row, _row_vt
    {%- for c in plan.value_columns %}, `_old_{{ loop.index }}`{% endfor %}
  from (select *, {{ new_wins }} as _new_wins from (
    select {{ keys }}, _vf,
      bool_or(_new) as _has_new,
      bool_or(not _new) as _has_old,
      bool_or(not _new and _is_delete) as _old_is_delete,
      bool_or(_is_delete) filter (where _new) as _new_is_delete,
      max(_version) filter (where _new) as _new_version,
      max(_version) filter (where not _new) as _old_version,
      bool_or(_row) as _has_row,
      max(_row_vt) as _row_vt
      {%- for c in plan.value_columns %},
      max({{ c }}) filter (where _new) as `_new_{{ loop.index }}`,
      max({{ c }}) filter (where not _new) as `_old_{{ loop.index }}`
      {%- endfor %}
    from points
    group by {{ keys }}, _vf
  ))
),

first_pass as (
  {#- which batch points change something, judged against the point before each;
      _segment_start is the latest stored interval start at or before the point #}
  select *, {{ scd2_kept_clause(plan) }} as _kept
  from (
    select *,
      {{ scd2_lag_columns(plan) }},
      max(case when _has_row then _vf end)
        over (partition by {{ keys }} order by _vf
              rows between unbounded preceding and current row) as _segment_start
    from merged_points
    window key_timeline as (partition by {{ keys }} order by _vf)
  )
),

timeline_points as (
  {#- a stored "deleted" point is forgotten once a batch delete already ended its
      interval earlier (as applying the events one by one would): a later batch row in
      that gap then runs to the next stored start, not to the old end #}
  select {{ point_columns }}
  from (
    select *,
      max(case when _kept and _is_delete then _vf end) over (
        partition by {{ keys }} order by _vf
        rows between unbounded preceding and 1 preceding) as _last_delete
    from first_pass
  )
  where not (_has_old and _old_is_delete and _is_delete
    and _last_delete is not null and (_segment_start is null or _last_delete >= _segment_start))
),

kept_points as (
  {#- stored points always stay; a batch point without a stored one at its time stays
      only if it changes the state in force just before it: a row must differ from the
      previous row's tracked columns (or follow a delete / nothing), a delete must
      follow a row #}
  select * from (
    select *, {{ scd2_lag_columns(plan) }}
    from timeline_points
    window key_timeline as (partition by {{ keys }} order by _vf)
  )
  where {{ scd2_kept_clause(plan) }}
),

changes as (
  {#- a kept point that is not a delete is a wanted row, valid_to = lead(valid_from);
      compared with the stored row starting at the same time (every stored start is a
      kept point): insert (none stored), update (different valid_to or values), delete
      (stored, but the point is a delete) #}
  select {{ keys }}, _vf,
    case when _is_delete then _row_vt else _vt end as _vt,
    {%- for c in plan.value_columns %}
    case when _is_delete then `_old_{{ loop.index }}` else {{ c }} end as {{ c }},
    {%- endfor %}
    case when _is_delete then 'delete' when not _has_row then 'insert' else 'update' end
      as _change
  from (
    select {{ point_columns }}, lead(_vf) over (partition by {{ keys }} order by _vf) as _vt
    from kept_points
  )
  where (_has_row or not _is_delete)
    and (_is_delete or not _has_row or not (_vt <=> _row_vt
    {%- for c in plan.value_columns %} and {{ mutable_same_value(c, '`_old_' ~ loop.index ~ '`', plan.value_types[loop.index0]) }}{% endfor %}))
)

select
  {%- for c in plan.storage_columns %}
  {%- if c.role == 'valid_from' %}
  cast(_vf as {{ c.type }}) as {{ c.quoted }},
  {%- elif c.role == 'valid_to' %}
  cast(_vt as {{ c.type }}) as {{ c.quoted }},
  {%- else %}
  cast({{ c.quoted }} as {{ c.type }}) as {{ c.quoted }},
  {%- endif %}
  {%- endfor %}
  {{ tenant_col }},
  _change
from changes
{%- endmacro %}
