{#-- merge_functions (docs/mutable_table.md#merge-functions): how a key's new value
     combines with its stored one, per column. Python validates the config
     (mutable_table/rules/merge_functions.py); the planner (change_set.sql) calls these two macros. --#}


{#-- The new row's value of one column. `s`: the batch's value (already combined over the
     key's batch rows), `t`: the stored value (NULL for a new key). Columns without a
     function follow partial_updates: `keeps_stored`, whether a NULL keeps this column's
     stored value (the planner's keeps_stored_on_null). --#}
{% macro mutable_merged_value(function, s, t, keeps_stored, sum_type=none) -%}
  {%- if function == 'sum' and sum_type -%}
    {#- whole numbers and decimals add in sum_type, which cannot overflow; the planner
        casts the sum back with a check (mutable_merge_functions_stored_value) #}
    coalesce(cast({{ s }} as {{ sum_type }}) + cast({{ t }} as {{ sum_type }}), {{ s }}, {{ t }})
  {%- elif function == 'sum' -%}
    coalesce({{ s }} + {{ t }}, {{ s }}, {{ t }})
  {%- elif function == 'min' -%}
    least({{ s }}, {{ t }})
  {%- elif function == 'max' -%}
    greatest({{ s }}, {{ t }})
  {%- elif function == 'first' -%}
    coalesce({{ t }}, {{ s }})
  {%- elif function == 'last_non_null' or keeps_stored -%}
    coalesce({{ s }}, {{ t }})
  {%- else -%}
    {{ s }}
  {%- endif -%}
{%- endmacro %}


{#-- A key's combined batch value of storage column `c` (a [name, type] pair), over the
     key's batch rows that are newer than its stored version and follow its last delete. --#}
{% macro mutable_merge_functions_combined_value(definition, c) -%}
{%- set col = adapter.quote_column(c[0]) -%}
{%- set v = mutable_version_expr(definition) -%}
{%- set fn = (definition.get('merge_functions') or {}).get(c[0]) -%}
{%- set live = 'case when ' ~ col ~ ' is not null and not is_delete then ' ~ v ~ ' end' -%}
{%- set rules = adapter.mutable_planner(definition) -%}
{%- set sum_type = rules.sum_type(c[1]) if fn == 'sum' else none -%}
{%- if sum_type %}
    {{ mutable_merge_functions_stored_value(definition, c, 'sum(cast(' ~ col ~ ' as ' ~ sum_type ~ ')) filter (where not is_delete)', sum_type) }}
{%- else %}
    cast(
      {%- if c[0] in ([definition.version_column] if definition.version_column is string else (definition.version_column or [])) %} max_by({{ col }}, {{ v }})
      {%- elif fn in ('sum', 'min', 'max') %} {{ fn }}({{ col }}) filter (where not is_delete)
      {%- elif fn == 'first' %} min_by({{ col }}, {{ live }})
      {%- elif fn == 'last_non_null' or rules.keeps_stored_on_null(c[0]) %} max_by({{ col }}, {{ live }})
      {%- else %} max_by({{ col }}, {{ v }})
      {%- endif %} as {{ c[1] }})
{%- endif %}
{%- endmacro %}


{#-- A merge function's result `expr` (of `source_type`) as storage column `c` stores it:
     a sum the stored type cannot hold exactly fails the statement before its write
     commits (mutable_table/exact_casts.py), naming the column and the value. --#}
{% macro mutable_merge_functions_stored_value(definition, c, expr, source_type) -%}
  {{ adapter.mutable_planner(definition).stored_sum(c[0], c[1], expr, source_type) }}
{%- endmacro %}


{#-- The batch rows that combine (`rows`: a query over the batch's columns, with the
     stored version as _stored_version): those newer than the key's stored version (older
     ones were applied by an earlier run: re-running a batch changes nothing) and, with
     delete_when, not before the key's last delete in the batch. --#}
{% macro mutable_merge_functions_fresh_sql(definition, rows) -%}
{%- set q = adapter.mutable_planner(definition).quoted -%}
{%- set v = mutable_version_expr(definition) -%}
{%- if definition.delete_when %}
  select * from (
    select fresh.*,
      max(case when is_delete then {{ v }} end) over (
        partition by tenant_id{% for k in definition.storage_key %}, {{ q[k] }}{% endfor %}) as _last_delete
    from ({{ rows }}) as fresh
    where coalesce({{ v }} > _stored_version, true)
  ) where _last_delete is null or {{ v }} >= _last_delete
{%- else %}
  select * from ({{ rows }}) as fresh where coalesce({{ v }} > _stored_version, true)
{%- endif %}
{%- endmacro %}


{#-- The `joined` rows of the change set when merge functions meet a version column and
     the run deletes no absent keys: one row per key in the planner's joined shape (s_/t_
     columns), combining the key's fresh batch rows (mutable_merge_functions_fresh_sql).
     The stored rows are read once: each batch row carries its key's stored row (`target`
     of the planner: the stored rows of the batch's keys), and the stored values and
     version come through the aggregate. A delete_when row ends the key: only the rows
     after the key's last delete combine, `restarted` tells the planner to ignore the
     stored values, and when the newest row is the delete the key is deleted. --#}
{% macro mutable_merge_functions_joined_sql(definition) -%}
{%- set q = adapter.mutable_planner(definition).quoted -%}
{%- set key = definition.storage_key -%}
{%- set rows -%}
  select b.*, {{ mutable_version_expr(definition, 't.') }} as _stored_version,
    {%- for c in definition.storage_columns %}
    t.{{ q[c[0]] }} as t_{{ c[0] }},
    {%- endfor %}
    t.tenant_id as t_tenant_id
  from batch as b
  left join target as t on {{ mutable_key_match_clause(definition, 'b', 't') }}
{%- endset %}
  select
    {%- for c in definition.storage_columns %}
    {%- if c[0] in key %}
    {{ q[c[0]] }} as s_{{ c[0] }},
    {%- else %}
    {{ mutable_merge_functions_combined_value(definition, c) }} as s_{{ c[0] }},
    {%- endif %}
    any_value(t_{{ c[0] }}) as t_{{ c[0] }},
    {%- endfor %}
    tenant_id as s_tenant_id, any_value(t_tenant_id) as t_tenant_id,
    max_by(is_delete, {{ mutable_version_expr(definition) }}) as is_delete,
    max(is_delete) as restarted,
    true as in_batch,
    max(t_{{ key[0] }} is not null) as in_target
  from ({{ mutable_merge_functions_fresh_sql(definition, rows) }}) as combined
  group by tenant_id{% for k in key %}, {{ q[k] }}{% endfor %}
{%- endmacro %}


{#-- The `latest` rows of the change set when merge functions meet a version column and
     the run deletes the stored keys absent from the batch (hard_deletes: delete, whose
     `target` is every stored row of the scope): one row per key, as
     mutable_merge_functions_joined_sql combines them, the stored versions read by a
     semi join of the stored rows with the batch; a key whose batch rows are all stale
     keeps one row, so that it is not taken for absent and deleted. Reads the `batch`
     CTE of the planner. --#}
{% macro mutable_merge_functions_latest_sql(definition, target_relation, tenant) -%}
{%- set q = adapter.mutable_planner(definition).quoted -%}
{%- set key = definition.storage_key -%}
{%- set rows -%}
  select b.*, stored._stored_version from batch as b
  left join (
    select scoped.tenant_id{% for k in key %}, scoped.{{ q[k] }}{% endfor %}, {{ mutable_version_expr(definition, 'scoped.') }} as _stored_version
    from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as scoped
    left semi join batch as s on {{ mutable_key_match_clause(definition, 'scoped', 's') }}
  ) as stored on {{ mutable_key_match_clause(definition, 'b', 'stored') }}
{%- endset %}
  select tenant_id{% for k in key %}, {{ q[k] }}{% endfor %},
    {%- for c in definition.storage_columns if c[0] not in key %}
    {{ mutable_merge_functions_combined_value(definition, c) }} as {{ q[c[0]] }},
    {%- endfor %}
    max_by(is_delete, {{ mutable_version_expr(definition) }}) as is_delete,
    max(is_delete) as restarted,
    1 as rn
  from ({{ mutable_merge_functions_fresh_sql(definition, rows) }}) as combined
  group by tenant_id{% for k in key %}, {{ q[k] }}{% endfor %}
  union all
  {#- a key whose batch rows are all at or below its stored version is in the batch, not
      absent (re-sending a snapshot must not delete it): one row at its highest batch
      version, which the planner leaves alone (not newer than the stored one) #}
  select tenant_id{% for k in key %}, {{ q[k] }}{% endfor %},
    {%- for c in definition.storage_columns if c[0] not in key %}
    cast(max_by({{ q[c[0]] }}, {{ mutable_version_expr(definition) }}) as {{ c[1] }}) as {{ q[c[0]] }},
    {%- endfor %}
    false as is_delete,
    false as restarted,
    1 as rn
  from ({{ rows }}) as stale
  group by tenant_id{% for k in key %}, {{ q[k] }}{% endfor %}
  having not max(coalesce({{ mutable_version_expr(definition) }} > _stored_version, true))
{%- endmacro %}
