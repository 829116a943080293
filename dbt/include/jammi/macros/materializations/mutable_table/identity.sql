{#-- identity_column (docs/mutable_table.md#identity-column, mutable_table/rules/identity.py):
     the engine numbers every new key; a stored key keeps its number; a number is never
     handed out twice. The planner (change_set.sql) asks these macros for the column's
     value; the rewrite applier writes the version's high-water mark with its rows; the
     MERGE applier records where its numbering started in its own Delta commit.

     Run-only keys on the definition, set before each plan (set_mutable_identity_from):
       identity_from   the greatest number handed out so far (mark and stored rows);
       identity_guard  MERGE formats: the plan stops (jammi-identity-moved) when the
                       table it reads already stores a number above identity_from, a
                       run that committed after this plan's read; the run re-plans. --#}


{#-- Before planning against `plan_target` (none: a new table): where new keys are
     numbered from. `state`: the stored state planned from (its version's location). --#}
{% macro set_mutable_identity_from(definition, plan_target, state, file_format) -%}
  {%- if definition.get('identity_column') -%}
    {%- set location = state.location if state is not none else none -%}
    {%- do definition.update({
          'identity_from': adapter.mutable_identity_from(definition, plan_target, file_format, location),
          'identity_guard': plan_target is not none and adapter.uses_merge(file_format)}) -%}
  {%- endif -%}
{%- endmacro %}


{#-- The planner's value of the identity column in an insert: the next numbers, in key
     order, over the plan's inserts (`kind`: the plan's change-kind column; `key_prefix`:
     its key columns'). Every other change keeps the stored number (change_set.sql), so an
     unchanged number is never an update. --#}
{% macro mutable_identity_insert_value(definition, target_relation, kind='change_kind', key_prefix='s_') -%}
  {%- set q = adapter.quote_column -%}
  {%- set start = definition.get('identity_from') or 0 -%}
  {%- set numbered -%}
    cast({{ start }} + row_number() over (partition by {{ kind }} order by {{ key_prefix }}tenant_id
      {%- for k in definition.storage_key %}, {{ key_prefix }}{{ k }}{% endfor %}) as bigint)
  {%- endset -%}
  {%- if definition.get('identity_guard') and target_relation is not none -%}
    case when (select coalesce(max({{ q(definition.identity_column) }}), 0) from {{ target_relation }}) > {{ start }}
      then cast(raise_error('{{ adapter.mutable_identity_moved_marker() }}: another run stored numbers above {{ start }}') as bigint)
      else {{ numbered }} end
  {%- else -%}
    {{ numbered }}
  {%- endif -%}
{%- endmacro %}


{#-- The rewrite applier's step that writes the next version's high-water mark into it
     (<location>/_jammi_identity, skipped by Spark's file readers) before the version is
     committed: the mark becomes current with the rows or not at all. `planned_location`:
     the version planned from (a rollback plans without identity_from: the mark is then
     read here from that version and its stored rows). --#}
{% macro mutable_identity_mark_steps(definition, target_relation, change_set_relation, location, planned_location) -%}
  {%- if not definition.get('identity_column') -%}{{ return([]) }}{%- endif -%}
  {%- set start = definition.get('identity_from') -%}
  {%- if start is none -%}
    {%- set start = adapter.mutable_identity_from(definition, target_relation, 'parquet', planned_location) -%}
  {%- endif -%}
  {{ return([{'sql': get_write_identity_mark_sql(definition, change_set_relation, location, start), 'undo_paths': [location]}]) }}
{%- endmacro %}


{#-- The mark after a change set: `start` or the highest number the set stores. --#}
{% macro get_write_identity_mark_sql(definition, change_set_relation, location, start) -%}
  insert overwrite directory {{ adapter.sql_string(adapter.mutable_identity_mark_location(location)) }} using parquet
  select greatest(cast({{ start }} as bigint), coalesce(max({{ adapter.quote_column(definition.identity_column) }}), 0)) as high_water
  from {{ change_set_relation }} where _change in ('insert', 'update')
{%- endmacro %}
