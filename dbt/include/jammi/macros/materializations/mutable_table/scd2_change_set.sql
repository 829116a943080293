{#-
  SCD Type 2 change-set planner (history: scd2). One query shared by both appliers.

  Output: one row per storage row that must change, keyed by (tenant_id, primary key,
  valid_from), with the storage columns, tenant_id and _change in
  ('insert', 'update', 'delete'). Closing an interval is an 'update' of its valid_to,
  opening one is an 'insert', splitting one is both.

  Method (docs/scd2.md): per effective key, merge the stored timeline (each interval's
  start, plus a "deleted" point where an interval ends without a successor) with the
  batch's change points (rows, delete_when rows, hard deletes), drop the batch points
  that change nothing, recompute valid_to with lead() over what remains, and diff the
  result against the stored rows of the touched keys.
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
      cast(null as bigint) as _vf, cast(null as bigint) as _vt
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
      and {{ c }} <=> `_prev_{{ loop.index }}`
      {%- endfor %}))
    or (_is_delete and coalesce(not _prev_is_delete, false)))
{%- endmacro %}


{% macro default__get_scd2_change_set_sql(definition, source_relation, target_relation, tenant=none, scan_target_once=false) -%}
{%- set plan = adapter.scd2_plan(definition, run_started_at) -%}
{%- set tenant_col = plan.tenant_column -%}
{%- set keys = scd2_key_list(plan) -%}
{%- set version_expr = 'cast(' ~ plan.version_column ~ ' as bigint)' if plan.version_column else 'cast(null as bigint)' -%}
{%- set tenant_expr = mutable_tenant_expr(definition, tenant) -%}
{%- set key_text -%}
  concat_ws(', '
    {%- for k in plan.key_columns %}, concat({{ adapter.sql_string(k | replace('`', '') ~ '=') }}, coalesce(cast({{ k }} as string), 'NULL')){% endfor %},
    concat('tenant_id=', coalesce({{ tenant_col }}, 'NULL')))
{%- endset -%}
with

batch_rows as (
  {#- the model's output as change events at their effective time #}
  select
    {{ tenant_expr }} as {{ tenant_col }},
    {%- for k in plan.key_columns %}
    {{ k }},
    {%- endfor %}
    cast({{ plan.effective_time_column or plan.run_time_ms }} as bigint) as _vf,
    {%- for c in plan.value_columns %}
    {{ c }},
    {%- endfor %}
    {% if plan.delete_when %}coalesce(({{ plan.delete_when }}), false){% else %}false{% endif %} as _is_delete,
    {{ version_expr }} as _version
  from {{ source_relation }}
),

batch_checked as (
  select * from batch_rows
  where assert_true(_vf is not null, concat(
    'dbt-jammi scd2: a row of the batch has NULL {{ plan.valid_from | replace("`", "") }} (', {{ key_text }},
    '); output the effective time as bigint epoch milliseconds for every row')) is null
),

batch_distinct as (
  {#- identical duplicates collapse; a delete's other columns do not matter #}
  select distinct {{ keys }}, _vf,
    {%- for c in plan.value_columns %}
    case when _is_delete then null else {{ c }} end as {{ c }},
    {%- endfor %}
    _is_delete, _version
  from batch_checked
),

batch_top as (
  {#- per key and effective time: the highest version (all rows without version_column) #}
  select * from (
    select *, rank() over (partition by {{ keys }}, _vf order by _version desc nulls last) as _rank
    from batch_distinct
  ) where _rank = 1
),

batch_events as (
  select {{ keys }}, _vf
    {%- for c in plan.value_columns %}, {{ c }}{% endfor %}, _is_delete, _version
  from (select *, count(*) over (partition by {{ keys }}, _vf) as _rows_at_vf from batch_top)
  where assert_true(_rows_at_vf = 1, concat(
    'dbt-jammi scd2: the batch has different rows for one key at the same {{ plan.valid_from | replace("`", "") }} (',
    {{ key_text }}, ', {{ plan.valid_from | replace("`", "") }}=', cast(_vf as string), '); ',
    {%- if plan.version_column %}
    'they also share the highest {{ plan.version_column | replace("`", "") }}; make the versions differ or deduplicate the model output'
    {%- else %}
    'deduplicate the model output or set version_column so the highest version wins'
    {%- endif %})) is null
),

target_rows as (
  {{ scd2_target_rows_clause(plan, definition, target_relation, tenant) }}
),

{% if plan.hard_deletes -%}
batch_keys as (
  select distinct {{ keys }} from batch_rows
),

hard_delete_events as (
  {#- hard_deletes: delete -- open keys absent from the output close at the run's time #}
  select {{ scd2_key_list(plan, 't.') }}, cast({{ plan.run_time_ms }} as bigint) as _vf
    {%- for c in plan.value_columns %}, cast(null as {{ plan.value_types[loop.index0] }}) as {{ c }}{% endfor %},
    true as _is_delete, cast(null as bigint) as _version
  from target_rows t
  left anti join batch_keys b on {{ scd2_key_match_clause(plan, 't', 'b') }}
  where t._vt is null
),
{%- endif %}

new_points as (
  select * from batch_events
  {%- if plan.hard_deletes %}
  union all
  select * from hard_delete_events
  {%- endif %}
),

touched_keys as (
  select distinct {{ keys }} from new_points
),

old_rows as (
  {#- the stored rows of the touched keys, read by old_points and by changes: with
      `scan_target_once` the spark_partition_id() column (never used) makes this CTE
      non-deterministic, so Spark evaluates it once into a shuffle that both read
      (exchange reuse) instead of scanning the table twice; without reuse it is read
      twice, giving the same rows #}
  select t.*{% if scan_target_once %}, spark_partition_id() as _scan_part{% endif %}
  from target_rows t
  left semi join touched_keys k on {{ scd2_key_match_clause(plan, 't', 'k') }}
),

old_points as (
  {#- the stored timeline: every interval's start, and a "deleted" point where an
      interval ends without a successor starting at its valid_to (one scan) #}
  select {{ keys }}, p._vf
    {%- for c in plan.value_columns %},
    case when p._is_delete then null else {{ c }} end as {{ c }}
    {%- endfor %},
    p._is_delete,
    case when p._is_delete then cast(null as bigint) else {{ version_expr }} end as _version
  from (
    select *, lead(_vf) over (partition by {{ keys }} order by _vf) as _next_vf
    from old_rows
  ) as o
  lateral view explode(
    case when _vt is not null and not (_next_vf <=> _vt)
      then array(named_struct('_vf', _vf, '_is_delete', false),
                 named_struct('_vf', _vt, '_is_delete', true))
      else array(named_struct('_vf', _vf, '_is_delete', false))
    end) points as p
),

merged_points as (
  {#- one point per key and time; a batch point replaces a stored one unless
      version_column says the stored version is newer or equal -#}
  {%- set new_wins -%}
    (n._vf is not null and (o._vf is null or o._is_delete or n._version is null
      or o._version is null or n._version > o._version))
  {%- endset %}
  select
    case when n._vf is not null then n.{{ tenant_col }} else o.{{ tenant_col }} end as {{ tenant_col }},
    {%- for k in plan.key_columns %}
    case when n._vf is not null then n.{{ k }} else o.{{ k }} end as {{ k }},
    {%- endfor %}
    coalesce(n._vf, o._vf) as _vf,
    {%- for c in plan.value_columns %}
    case when {{ new_wins }} then n.{{ c }} else o.{{ c }} end as {{ c }},
    {%- endfor %}
    case when {{ new_wins }} then n._is_delete else o._is_delete end as _is_delete,
    {{ new_wins }} as _new_wins,
    o._vf is not null as _has_old,
    coalesce(o._is_delete, false) as _old_is_delete
  from new_points n
  full outer join old_points o
    on {{ scd2_key_match_clause(plan, 'n', 'o') }} and n._vf = o._vf
),

first_pass as (
  {#- which batch points change something, judged against the point before each;
      _segment numbers the stored intervals (a stored start opens a segment) #}
  select *, {{ scd2_kept_clause(plan) }} as _kept
  from (
    select *,
      {{ scd2_lag_columns(plan) }},
      sum(case when _has_old and not _old_is_delete then 1 else 0 end)
        over (partition by {{ keys }} order by _vf
              rows between unbounded preceding and current row) as _segment
    from merged_points
    window key_timeline as (partition by {{ keys }} order by _vf)
  )
),

timeline_points as (
  {#- a stored "deleted" point is forgotten once a batch delete already ended its
      interval earlier (as applying the events one by one would): a later batch row in
      that gap then runs to the next stored start, not to the old end #}
  select {{ keys }}, _vf
    {%- for c in plan.value_columns %}, {{ c }}{% endfor %},
    _is_delete, _new_wins, _has_old
  from (
    select *,
      max(case when _kept and _is_delete then 1 end) over (
        partition by {{ keys }}, _segment order by _vf
        rows between unbounded preceding and 1 preceding) as _deleted_before
    from first_pass
  )
  where not (_has_old and _old_is_delete and _is_delete and _deleted_before is not null)
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

desired_rows as (
  select * from (
    select {{ keys }}, _vf, lead(_vf) over (partition by {{ keys }} order by _vf) as _vt
      {%- for c in plan.value_columns %}, {{ c }}{% endfor %}, _is_delete
    from kept_points
  ) where not _is_delete
),

changes as (
  {#- one full outer join of the wanted rows with the stored rows of the touched keys #}
  select
    case when d._vf is not null then d.{{ tenant_col }} else o.{{ tenant_col }} end as {{ tenant_col }},
    {%- for k in plan.key_columns %}
    case when d._vf is not null then d.{{ k }} else o.{{ k }} end as {{ k }},
    {%- endfor %}
    coalesce(d._vf, o._vf) as _vf,
    case when d._vf is not null then d._vt else o._vt end as _vt,
    {%- for c in plan.value_columns %}
    case when d._vf is not null then d.{{ c }} else o.{{ c }} end as {{ c }},
    {%- endfor %}
    case when d._vf is null then 'delete' when o._vf is null then 'insert' else 'update' end
      as _change
  from desired_rows d
  full outer join old_rows o on {{ scd2_key_match_clause(plan, 'd', 'o') }} and o._vf = d._vf
  where d._vf is null or o._vf is null
    or not (d._vt <=> o._vt
    {%- for c in plan.value_columns %} and d.{{ c }} <=> o.{{ c }}{% endfor %})
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
