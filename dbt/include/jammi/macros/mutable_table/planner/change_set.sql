{#-
  Change-set planner (history: none). ONE query shared by both appliers.

  CONTRACT (the SCD2 planner, get_scd2_change_set_sql, returns the same shape):
    get_*_change_set_sql(definition, source_relation, target_relation, tenant) returns a
    SELECT whose rows are the storage rows that must change:
      - columns: every definition.storage_columns name (in order), then tenant_id,
        then _change in ('insert', 'update', 'delete');
      - exactly one row per affected storage row, keyed by (tenant_id, storage_key);
        tenant_id is compared NULL-safe (<=>), storage_key columns are never NULL;
      - 'insert': the key is not stored yet, the row is the complete new row;
      - 'update': the key is stored, the row is the complete new row (partial updates
        are already coalesced with the stored values);
      - 'delete': the key is stored; the row carries the stored values.
    target_relation is none when the table does not exist yet (first run / rebuild).
    tenant is the bound tenant (string) or none. The appliers (apply_merge.sql,
    apply_rewrite.sql) only apply this set; they never decide anything.

  Decisions per key (docs/mutable_table.md; the actions' guards: key_decisions.py):
    - batch rows are stamped with tenant_id (bound tenant / tenant_from / NULL);
    - duplicate keys in the batch were rejected or resolved by the checks in
      checks.sql; here the highest version per key is taken (version_rule.sql: one
      column, or several compared in order);
    - delete_when rows delete their key, hard_deletes: delete deletes stored keys of
      the run's scope that are absent from the batch;
    - with version_column an existing key changes only if the batch version is greater
      (older or equal versions are ignored: the first write of a version wins);
    - an update that changes no value is dropped, so re-running a batch is a no-op.
-#}

{% macro get_mutable_change_set_sql(definition, source_relation, target_relation, tenant=none) -%}
  {{ return(adapter.dispatch('get_mutable_change_set_sql', 'dbt')(
      definition, source_relation, target_relation, tenant)) }}
{%- endmacro %}


{#-- The planner for the definition's history mode. --#}
{#-- `scan_target_once`: the rewrite applier (which stages the change set) allows the
     planner to read the stored rows it needs once; the default scd2 planner reads them
     once either way, an override (jammi__get_scd2_change_set_sql) may use it. --#}
{#-- `ttl_ms`: the expired stored rows join the set (ttl.sql). `definition` is the
     attempt's (adapter.mutable_plan_prepare): its `now_ms` is the plan's one clock (the
     engine's _written_at and the TTL cutoff agree), its `ttl_expired_in_plan` tells
     whether the history-none planner finds the expired rows itself. --#}
{% macro get_change_set_sql(definition, source_relation, target_relation, tenant=none, scan_target_once=false) -%}
  {%- if definition.history == 'scd2' -%}
    {%- set planned = get_scd2_change_set_sql(definition, source_relation, target_relation, tenant, scan_target_once) -%}
  {%- else -%}
    {%- set planned = get_mutable_change_set_sql(definition, source_relation, target_relation, tenant) -%}
  {%- endif -%}
  {%- if definition.get('ttl_ms') -%}
    {{ return(mutable_ttl_change_set_sql(definition, planned, target_relation, tenant, definition.ttl_expired_in_plan)) }}
  {%- else -%}
    {{ return(planned) }}
  {%- endif -%}
{%- endmacro %}


{#-- The batch in the storage schema: every storage column cast to its type (NULL where
     the batch lacks it), tenant_id stamped (mutable_tenant_expr), and `delete_column`
     telling whether delete_when deletes the row's key (or a truncate does: the batch of
     a truncate_when model carries _jammi_truncated, rules/truncates.py); a
     version_groups batch (one row per key) keeps its _jammi_restarted
     (rules/version_groups.py). --#}
{% macro mutable_stamped_batch_sql(definition, source_relation, tenant, delete_column) -%}
  {%- set q = adapter.mutable_planner(definition).quoted -%}
  {%- set batch_columns = definition.batch_columns or (definition.storage_columns | map(attribute=0) | list) -%}
  select
    {%- for c in definition.storage_columns %}
    {%- if c[0] in batch_columns %}
    cast({{ q[c[0]] }} as {{ c[1] }}) as {{ q[c[0]] }},
    {%- else %}
    cast(null as {{ c[1] }}) as {{ q[c[0]] }},
    {%- endif %}
    {%- endfor %}
    {{ mutable_tenant_expr(definition, tenant) }} as tenant_id,
    {%- if definition.delete_when %}
    coalesce(({{ definition.delete_when }}), false){{ ' or _jammi_truncated' if definition.truncate_when }} as {{ delete_column }}
    {%- else %}
    {{ '_jammi_truncated' if definition.truncate_when else 'false' }} as {{ delete_column }}
    {%- endif %}
    {%- if definition.version_groups %},
    _jammi_restarted
    {%- endif %}
  from {{ source_relation }}
{%- endmacro %}


{#-- NULL-safe equality of two values of a column of type `spark_type`. Spark compares
     no maps and no variants: their JSON text decides, a map's entries sorted by key (orc
     stores a map's keys in its own order), with every microsecond of a timestamp
     (to_json prints milliseconds unless told; a variant prints its own way).
     mutable_table/compared_values.py writes the same text for Python's uses. --#}
{% macro mutable_same_value(a, b, spark_type) -%}
  {%- set t = spark_type | lower -%}
  {%- if t.startswith('map<') -%}
    {{ mutable_map_entries_json(a, 'variant' not in t) }} <=> {{ mutable_map_entries_json(b, 'variant' not in t) }}
  {%- elif 'map<' in t or 'variant' in t -%}
    {%- set options = '' if 'variant' in t else ', ' ~ mutable_exact_json_options() -%}
    to_json({{ a }}{{ options }}) <=> to_json({{ b }}{{ options }})
  {%- else -%}
    {{ a }} <=> {{ b }}
  {%- endif -%}
{%- endmacro %}


{% macro mutable_map_entries_json(value, exact=true) -%}
  to_json(array_sort(map_entries({{ value }}), (l, r) -> case when l.key < r.key then -1 when l.key > r.key then 1 else 0 end){{ ', ' ~ mutable_exact_json_options() if exact }})
{%- endmacro %}


{% macro mutable_exact_json_options() -%}
  map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS')
{%- endmacro %}


{#-- a.tenant_id <=> b.tenant_id and a.k = b.k ... over the storage key --#}
{% macro mutable_key_match_clause(definition, left, right) -%}
  {{ left }}.tenant_id <=> {{ right }}.tenant_id
  {%- for k in definition.storage_key %} and {{ left }}.{{ adapter.quote_column(k) }} = {{ right }}.{{ adapter.quote_column(k) }}{% endfor %}
{%- endmacro %}


{#-- The stored rows in the run's scope, or an empty relation of the storage schema. --#}
{% macro mutable_target_rows_sql(definition, target_relation, tenant) -%}
  {%- if target_relation is none -%}
    select
      {%- for c in definition.storage_columns %}
      cast(null as {{ c[1] }}) as {{ adapter.quote_column(c[0]) }},
      {%- endfor %}
      cast(null as string) as tenant_id
    where 1 = 0
  {%- else -%}
    select * from {{ target_relation }} where {{ mutable_target_scope_clause(definition, tenant) }}
  {%- endif -%}
{%- endmacro %}


{% macro default__get_mutable_change_set_sql(definition, source_relation, target_relation, tenant=none) -%}
{#-- the rules' parts of the plan, the names quoted (planner_rules.py) --#}
{%- set rules = adapter.mutable_planner(definition) -%}
{%- set q = rules.quoted -%}
{%- set key = definition.storage_key -%}
{%- set values = definition.value_columns -%}
{%- set version = definition.version_column -%}
{%- set full_outer = definition.hard_deletes == 'delete' -%}
{%- set types = {} -%}
{%- for c in definition.storage_columns %}{% do types.update({c[0]: c[1]}) %}{% endfor -%}
{%- set newer -%}
  {%- if version -%}{{ mutable_version_newer(definition, 's_', 't_', quote=false) }}{%- else -%}true{%- endif -%}
{%- endset -%}
{%- set merge_functions = definition.get('merge_functions') or {} -%}
{#-- merge functions with a version column: the batch rows of a key newer than its stored
     version combine among themselves first; without hard deletes the combined rows come
     out in the joined shape, the stored rows read once (merge_functions.sql;
     rules/merge_functions.py's combines_in_batch decides) --#}
{#-- (version_groups: the batch's rows are already combined, rules/version_groups.py) --#}
{%- set aggregate = merge_functions and version and not definition.version_groups -%}
{%- set combined = rules.combined -%}
{#-- ttl_ms: the expired stored rows of the scope are found in this plan's own read of the
     stored rows (one scan, no second one in ttl.sql): its stored side keeps the rows of
     the batch's keys and the expired ones, and an expired row the batch does not change
     becomes a 'delete'. Unless merge functions combine (rules/ttl.py's expired_in_plan
     decides, before the plan). --#}
{%- set ttl_in_plan = definition.get('ttl_expired_in_plan') -%}
{#-- the stored value a new row combines with: none when the key was deleted earlier in
     the same batch (its newer rows start it afresh) --#}
{%- set stored_value = {} -%}
{%- for c in definition.storage_columns -%}
  {%- do stored_value.update({c[0]: ('case when restarted then null else t_' ~ c[0] ~ ' end') if aggregate and definition.delete_when else ('t_' ~ c[0])}) -%}
{%- endfor -%}
{#-- the value a column gets in the new row of an insert or update; a whole-number or
     decimal sum adds in a type that cannot overflow (mutable_merged_value) --#}
{%- set sum_types = {} -%}
{%- for c in definition.storage_columns if merge_functions.get(c[0]) == 'sum' and rules.sum_type(c[1]) -%}
  {%- do sum_types.update({c[0]: rules.sum_type(c[1])}) -%}
{%- endfor -%}
{%- set new_value = {} -%}
{%- for c in definition.storage_columns -%}
  {%- do new_value.update({c[0]: mutable_merged_value(merge_functions.get(c[0]), 's_' ~ c[0], stored_value[c[0]], rules.keeps_stored_on_null(c[0]), sum_types.get(c[0]))}) -%}
{%- endfor -%}
{#-- ttl without ttl_column: the engine's _written_at is the run's time on every insert
     and update (not a value column: it never makes an update by itself) --#}
{#-- version_groups: each value follows its group's version, and a newer group version
     updates a row its version_column does not (rules/version_groups.py) --#}
{%- for c in values -%}
  {%- do new_value.update({c: rules.grouped_value(c, new_value[c], 's_', 't_', false, 'restarted')}) -%}
{%- endfor -%}
{%- set newer = rules.grouped_newer(newer, 'is_delete', 's_', 't_', false) -%}
{%- set written_at = rules.written_at -%}
{%- if written_at in new_value -%}
  {%- do new_value.update({written_at: 'cast(' ~ definition.now_ms ~ ' as bigint)'}) -%}
{%- endif -%}
{#-- identity_column: a stored key keeps its number, the batch's value is ignored; an
     insert takes the next number (identity.sql) --#}
{%- set identity = definition.get('identity_column') -%}
{%- if identity -%}
  {%- do new_value.update({identity: 't_' ~ identity}) -%}
{%- endif -%}
with

batch as (
  {#- with tombstones (tombstones.sql): each row's _tombstoned #}
  {{ mutable_tombstoned_batch_sql(definition, mutable_stamped_batch_sql(definition, source_relation, tenant, 'is_delete')) }}
),

{%- if combined %}

target as (
  {#- the stored rows of the batch's keys (a broadcast semi join, no shuffle) #}
  select scoped.* from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as scoped
  left semi join batch as s on {{ mutable_key_match_clause(definition, 'scoped', 's') }}
),

joined as (
  {{ mutable_merge_functions_joined_sql(definition) }}
),
{%- else %}

latest as (
  {#- one row per key: the highest version (ties were rejected by the batch checks,
      or, with checks_in_plan, are rejected here on the way: mutable_checked_batch_sql) #}
  {%- if definition.get('checks_in_plan') %}
  select *, _rn as rn, {{ '_jammi_restarted' if definition.version_groups else 'false' }} as restarted from (
    {{ mutable_checked_batch_sql(definition, 'select * from batch', tenant) }}
  ) as checked
  {%- elif aggregate %}
  {{ mutable_merge_functions_latest_sql(definition, target_relation, tenant) }}
  {%- elif version %}
  select * from (
    select *, row_number() over (
      partition by tenant_id{% for k in key %}, {{ q[k] }}{% endfor %}
      order by {{ mutable_version_expr(definition) }} desc) as rn, {{ '_jammi_restarted' if definition.version_groups else 'false' }} as restarted
    from batch
  ) where rn = 1
  {%- else %}
  select *, 1 as rn, {{ '_jammi_restarted' if definition.version_groups else 'false' }} as restarted from batch
  {%- endif %}
),

target as (
  {%- if ttl_in_plan %}
  {#- the stored rows of the batch's keys and the expired ones (an existence join, the
      batch broadcast: one scan, no shuffle) #}
  select * from (
    select scoped.*, {{ mutable_ttl_expired_sql(definition) }} as _jammi_expired
    from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as scoped
  ) as stored
  {%- if not full_outer %}
  where stored._jammi_expired or exists (
    select 1 from latest as s where {{ mutable_key_match_clause(definition, 's', 'stored') }})
  {%- endif %}
  {%- elif full_outer %}
  {{ mutable_target_rows_sql(definition, target_relation, tenant) }}
  {%- else %}
  {#- only the stored rows of keys in the batch (a broadcast semi join, no shuffle) #}
  select scoped.* from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as scoped
  left semi join latest as s on {{ mutable_key_match_clause(definition, 'scoped', 's') }}
  {%- endif %}
),

joined as (
  select
    {%- for c in definition.storage_columns %}
    s.{{ q[c[0]] }} as s_{{ c[0] }}, t.{{ q[c[0]] }} as t_{{ c[0] }},
    {%- endfor %}
    s.tenant_id as s_tenant_id, t.tenant_id as t_tenant_id,
    s.is_delete as is_delete,
    {{ mutable_tombstoned_column(definition, 's') }}
    coalesce(s.restarted, false) as restarted,
    s.rn is not null as in_batch,
    {%- if ttl_in_plan %}
    coalesce(t._jammi_expired, false) as t_expired,
    {%- endif %}
    t.{{ q[key[0]] }} is not null as in_target
  from latest as s
  {{ 'full outer join' if full_outer or ttl_in_plan else 'left join' }} target as t
    on {{ mutable_key_match_clause(definition, 's', 't') }}
),
{%- endif %}

decided as (
  {#- the key's action (key_decisions.py, shared with the batch MERGE); with ttl, a stored
      row the plan leaves as it is but that has expired is deleted #}
  {%- set same -%}
    {%- for c in values %}{{ mutable_same_value(new_value[c], 't_' ~ c, types[c]) }}{{ ' and ' if not loop.last }}{% endfor -%}
  {%- endset %}
  select *,
    {{ 'coalesce(' if ttl_in_plan }}{{ rules.decisions.case_sql({
        'stored': 'in_target', 'in_batch': 'in_batch', 'is_delete': 'is_delete',
        'newer': newer, 'tombstoned': 'tombstoned', 'same': same}, full_outer or ttl_in_plan) }}
    {{- ", if(t_expired, 'delete', null))" if ttl_in_plan }} as change_kind
  from joined
)

select
  {%- for c in definition.storage_columns %}
  {%- if c[0] in key %}
  case when in_batch then s_{{ c[0] }} else t_{{ c[0] }} end as {{ q[c[0]] }},
  {%- else %}
  case change_kind
    when 'delete' then t_{{ c[0] }}
    when 'insert' then {{ mutable_identity_insert_value(definition, target_relation) if c[0] == identity else new_value[c[0]] if c[0] == written_at else 's_' ~ c[0] }}
    {#- a merge function's result keeps the stored type (a decimal sum widens) #}
    else {{ mutable_merge_functions_stored_value(definition, c, new_value[c[0]], sum_types[c[0]]) if c[0] in sum_types else ('cast(' ~ new_value[c[0]] ~ ' as ' ~ c[1] ~ ')') if c[0] in merge_functions else new_value[c[0]] }}
  end as {{ q[c[0]] }},
  {%- endif %}
  {%- endfor %}
  case when in_batch then s_tenant_id else t_tenant_id end as tenant_id,
  change_kind as _change
  {%- if rules.previous_in_plan %}
  {%- for c in definition.storage_columns %},
  t_{{ c[0] }} as _jammi_prev_{{ loop.index0 }}
  {%- endfor %}
  {%- endif %}
from decided
where change_kind is not null
{%- endmacro %}
