{#-- merge_functions (docs/mutable_table.md#merge-functions): how a key's new value
     combines with its stored one, per column. Python validates the config
     (mutable_table/rules/merge_functions.py); the planner (change_set.sql) calls these two macros. --#}


{#-- The new row's value of one column. `s`: the batch's value (already combined over the
     key's batch rows), `t`: the stored value (NULL for a new key). Columns without a
     function follow partial_updates. --#}
{% macro mutable_merged_value(function, s, t, partial_updates) -%}
  {%- if function == 'sum' -%}
    coalesce({{ s }} + {{ t }}, {{ s }}, {{ t }})
  {%- elif function == 'min' -%}
    least({{ s }}, {{ t }})
  {%- elif function == 'max' -%}
    greatest({{ s }}, {{ t }})
  {%- elif function == 'first' -%}
    coalesce({{ t }}, {{ s }})
  {%- elif function == 'last_non_null' or partial_updates -%}
    coalesce({{ s }}, {{ t }})
  {%- else -%}
    {{ s }}
  {%- endif -%}
{%- endmacro %}


{#-- The `latest` rows of the change set when merge functions meet a version column: one
     row per key, combining the key's batch rows that are newer than its stored version
     (older ones were applied by an earlier run: re-running a batch changes nothing).
     A delete_when row ends the key: only the rows after the key's last delete combine,
     `restarted` tells the planner to ignore the stored values, and when the newest row
     is the delete the key is deleted. Reads the `batch` CTE of the planner. --#}
{% macro mutable_merge_functions_latest_sql(definition, target_relation, tenant) -%}
{%- set q = adapter.quote_column -%}
{%- set key = definition.storage_key -%}
{%- set v = mutable_version_expr(definition) -%}
{%- set version_parts = [definition.version_column] if definition.version_column is string else (definition.version_column or []) -%}
{%- set functions = definition.get('merge_functions') or {} -%}
  select tenant_id{% for k in key %}, {{ q(k) }}{% endfor %},
    {%- for c in definition.storage_columns if c[0] not in key %}
    {%- set col = q(c[0]) %}
    {%- set fn = functions.get(c[0]) %}
    {%- set live = 'case when ' ~ col ~ ' is not null and not is_delete then ' ~ v ~ ' end' %}
    cast(
      {%- if c[0] in version_parts %} max_by({{ col }}, {{ v }})
      {%- elif fn in ('sum', 'min', 'max') %} {{ fn }}({{ col }}) filter (where not is_delete)
      {%- elif fn == 'first' %} min_by({{ col }}, {{ live }})
      {%- elif fn == 'last_non_null' or definition.partial_updates %} max_by({{ col }}, {{ live }})
      {%- else %} max_by({{ col }}, {{ v }})
      {%- endif %} as {{ c[1] }}) as {{ col }},
    {%- endfor %}
    max_by(is_delete, {{ v }}) as is_delete,
    max(is_delete) as restarted,
    1 as rn
  from (
    select * from (
      select fresh.*,
        max(case when is_delete then {{ v }} end) over (
          partition by tenant_id{% for k in key %}, {{ q(k) }}{% endfor %}) as _last_delete
      from (
        select b.* from batch as b
        left join (
          select scoped.tenant_id{% for k in key %}, scoped.{{ q(k) }}{% endfor %}, {{ mutable_version_expr(definition, 'scoped.') }} as _stored_version
          from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as scoped
          left semi join batch as s on {{ mutable_key_match_clause(definition, 'scoped', 's') }}
        ) as stored on {{ mutable_key_match_clause(definition, 'b', 'stored') }}
        where coalesce({{ mutable_version_expr(definition, 'b.') }} > stored._stored_version, true)
      ) as fresh
    ) where _last_delete is null or {{ v }} >= _last_delete
  ) as combined
  group by tenant_id{% for k in key %}, {{ q(k) }}{% endfor %}
{%- endmacro %}
