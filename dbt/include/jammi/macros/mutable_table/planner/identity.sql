{#-- identity_column (docs/mutable_table.md#identity-column, mutable_table/rules/identity.py):
     the engine numbers every new key; a stored key keeps its number; a number is never
     handed out twice. The planner (change_set.sql) asks this macro for the column's
     value. Where numbering starts (identity_from, identity_guard on the run's
     definition), the rewrite formats' mark and Iceberg's branch record:
     rules/identity_phases.py. --#}


{#-- The planner's value of the identity column in an insert: the next numbers, in key
     order, over the plan's inserts (`kind`: the plan's change-kind column; `key_prefix`:
     its key columns'). Every other change keeps the stored number (change_set.sql), so an
     unchanged number is never an update. --#}
{% macro mutable_identity_insert_value(definition, target_relation, kind='change_kind', key_prefix='s_') -%}
  {%- set q = adapter.mutable_planner(definition).quoted -%}
  {%- set start = definition.get('identity_from') or 0 -%}
  {%- set numbered -%}
    cast({{ start }} + row_number() over (partition by {{ kind }} order by {{ key_prefix }}tenant_id
      {%- for k in definition.storage_key %}, {{ key_prefix }}{{ k }}{% endfor %}) as bigint)
  {%- endset -%}
  {%- if definition.get('identity_guard') and target_relation is not none -%}
    case when (select coalesce(max({{ q[definition.identity_column] }}), 0) from {{ target_relation }}) > {{ start }}
      then cast(raise_error('{{ adapter.mutable_planner(definition).identity_moved_marker }}: another run stored numbers above {{ start }}') as bigint)
      else {{ numbered }} end
  {%- else -%}
    {{ numbered }}
  {%- endif -%}
{%- endmacro %}
