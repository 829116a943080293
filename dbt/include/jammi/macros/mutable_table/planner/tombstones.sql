{#-- Deletes stay deleted (docs/mutable_table.md#deletes-stay-deleted;
     mutable_table/rules/tombstones.py). Under a version rule with delete_when, a delete
     whose version is newer than what the table holds for its key leaves a tombstone
     (tenant_id, the primary key, the version columns, _deleted_ms); a batch row of that
     key whose version is not newer than the tombstone changes nothing (its `_tombstoned`
     flag, read by the planner and the batch-sourced MERGE). Tombstones are kept
     tombstone_retention and are never rows of the table.

     Where they live and how they commit with their delete: rules/tombstone_phases.py.
     Here: the planner's side (the batch's `_tombstoned` flag; the guards that read it are
     key_decisions.py's) and the plan's new tombstones. --#}


{#-- The stamped batch with `_tombstoned`: true when the row's version is not newer than
     its key's live tombstone (the row changes nothing). Unchanged without tombstones. --#}
{% macro mutable_tombstoned_batch_sql(definition, stamped_sql) -%}
  {%- if not adapter.mutable_planner(definition).keeps_tombstones -%}
    {{ stamped_sql }}
  {%- elif not definition.get('tombstones_from') -%}
    select stamped.*, false as _tombstoned from ({{ stamped_sql }}) as stamped
  {%- else -%}
    select stamped.*, coalesce({{ mutable_version_expr(definition, 'stamped.') }} <= tomb._tomb_version, false) as _tombstoned
    from ({{ stamped_sql }}) as stamped
    left join (
      select tenant_id{% for k in definition.storage_key %}, {{ adapter.quote_column(k) }}{% endfor %}, max({{ mutable_version_expr(definition) }}) as _tomb_version
      from ({{ definition.tombstones_from }}) as live
      group by tenant_id{% for k in definition.storage_key %}, {{ adapter.quote_column(k) }}{% endfor %}
    ) as tomb on {{ mutable_key_match_clause(definition, 'stamped', 'tomb') }}
  {%- endif -%}
{%- endmacro %}


{#-- The planner's joined CTE: the batch row's flag (`s`: the batch side). --#}
{% macro mutable_tombstoned_column(definition, s) -%}
  {%- if adapter.mutable_planner(definition).keeps_tombstones -%}
    coalesce({{ s }}._tombstoned, false) as tombstoned,
  {%- endif -%}
{%- endmacro %}


{#-- This plan's new tombstones: per key, the batch's winning row when it is a delete,
     not tombstoned already, and newer than the stored row (or the key is not stored). --#}
{% macro get_tombstone_candidates_sql(definition, batch_source, target_relation, tenant) -%}
  {%- set q = adapter.mutable_planner(definition).quoted -%}
  select {% for c in adapter.mutable_planner(definition).tombstone_columns %}{{ 'cast(' ~ definition.tombstone_now_ms ~ ' as bigint) as ' ~ q[c[0]] if loop.last else 's.' ~ q[c[0]] }}{{ ', ' if not loop.last }}{% endfor %}
  from (
    select *, row_number() over (
      partition by tenant_id{% for k in definition.storage_key %}, {{ q[k] }}{% endfor %}
      order by {{ mutable_version_expr(definition) }} desc) as _tomb_rn
    from ({{ mutable_tombstoned_batch_sql(definition, mutable_stamped_batch_sql(definition, batch_source, tenant, '_is_delete')) }}) as tb
  ) as s
  left anti join ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as t
    on {{ mutable_key_match_clause(definition, 's', 't') }} and not {{ mutable_version_newer(definition, 's.', 't.') }}
  where s._tomb_rn = 1 and s._is_delete and not s._tombstoned
{%- endmacro %}


{#-- Before applying a plan: the tombstones it leaves (rules/tombstone_phases.py):
     {'sql', 'new'}, and on Iceberg 'branch_insert'. parquet/orc: the next version's
     complete set and how many are new (a version is written for them even when no row
     changes); Delta: appended here, before the MERGE, and the count is 0; Iceberg: the
     count, and the append the branch commit runs (apply_merge). `definition` is the
     attempt's, with its tombstone values (tombstones_from, its clock:
     adapter.mutable_plan_prepare). No-op without tombstones or on a first run. --#}
{% macro plan_mutable_tombstones(definition, batch_source, target_relation, state, file_format, tenant) -%}
  {%- if not adapter.mutable_planner(definition).keeps_tombstones or state is none -%}
    {{ return({'sql': none, 'new': 0}) }}
  {%- endif -%}
  {%- set candidates = get_tombstone_candidates_sql(definition, batch_source, target_relation, tenant) -%}
  {{ return(adapter.mutable_tombstones_apply(definition, target_relation, state, file_format, candidates, invocation_id)) }}
{%- endmacro %}
