{#-- ttl_ms (docs/mutable_table.md#expiring-rows): the run's change set also deletes the
     stored rows of its scope that have expired, so they commit with the run's own
     changes (one MERGE / one version), and never inserts or keeps a row that is already
     expired. A row's age column: ttl_column, the engine's _written_at (history none
     without ttl_column), or valid_to (scd2: closed intervals only; the open row has no
     valid_to and never expires by TTL alone), as epoch milliseconds (a timestamp or date
     converts: planner_rules.py). A NULL age never expires.

     Wraps a planner's change set (same CONTRACT as change_set.sql): rows of `planned`
     win over the expired stored row of the same key; an 'update' whose new row is
     expired becomes a 'delete' (it carries the new row's values), an expired 'insert' is
     dropped. `stored_in_plan`: the planner found the expired stored rows in its own read
     of the stored rows (the history-none planner: definition.ttl_expired_in_plan), so
     only the new rows are checked here; otherwise (scd2, merge functions combining with
     a version) the stored rows are read again for them. --#}

{#-- Whether the row's age column is below the plan's cutoff (false for a NULL age). --#}
{% macro mutable_ttl_expired_sql(definition) -%}
  {{ adapter.mutable_planner(definition).ttl_expired }}
{%- endmacro %}


{% macro mutable_ttl_change_set_sql(definition, planned_sql, target_relation, tenant, stored_in_plan=false) -%}
{%- set q = adapter.mutable_planner(definition).quoted -%}
{%- set expired = mutable_ttl_expired_sql(definition) -%}
{%- set columns -%}
  {%- for c in definition.storage_columns %}{{ q[c[0]] }}, {% endfor %}tenant_id
{%- endset -%}
with planned as (
  {{ planned_sql }}
),

marked as (
  select {{ columns }},
    case when not {{ expired }} then _change when _change <> 'insert' then 'delete' end as _change
  from planned
),

candidates as (
  {#- the generator drops the expired inserts (NULL _change). Not a WHERE: a filter over
      the planner's output makes Spark's constraint inference expand over every column
      alias of the plan (exponential in the column count: minutes and an OOM for 8) #}
  select {{ columns }}, _change, 0 as _ttl_source
  from marked lateral view explode(if(_change is null, array(), array(1))) ttl_keep as _ttl_keep
  {%- if target_relation is not none and not stored_in_plan %}
  union all
  select {{ columns }}, 'delete' as _change, 1 as _ttl_source
  from ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as stored
  where {{ expired }}
  {%- endif %}
)

{%- if stored_in_plan %}
select {{ columns }}, _change from candidates
{%- else %}
{#- one row per storage key: the plan's row when it has one (min_by, not a window and a
    filter, for the same reason) #}
select winner.* from (
  select min_by(struct({{ columns }}, _change), _ttl_source) as winner
  from candidates
  group by tenant_id{% for k in definition.storage_key %}, {{ q[k] }}{% endfor %}
)
{%- endif %}
{%- endmacro %}
