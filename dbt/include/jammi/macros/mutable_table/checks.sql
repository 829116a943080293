{#-- Checks that run before anything is written: on the batch (NULL keys, NULL versions,
     duplicate keys) and on the would-be next state (unique indexes). Each check is one
     query returning up to 5 sample rows; a non-empty answer fails the run with them. --#}

{#-- The columns that identify a row within one batch: the primary key (plus valid_from
     for scd2 batches that carry their effective time). --#}
{% macro mutable_batch_key(definition) -%}
  {%- set key = definition.primary_key | list -%}
  {%- if definition.history == 'scd2' and definition.valid_from in (definition.batch_columns or []) -%}
    {%- do key.append(definition.valid_from) -%}
  {%- endif -%}
  {{ return(key) }}
{%- endmacro %}


{% macro get_batch_null_key_sql(definition, batch_source) -%}
  {%- set key = mutable_batch_key(definition) -%}
  select * from {{ batch_source }}
  where {% for k in key %}{{ adapter.quote_column(k) }} is null{{ ' or ' if not loop.last }}{% endfor %}
  limit 5
{%- endmacro %}


{% macro get_batch_null_version_sql(definition, batch_source) -%}
  select * from {{ batch_source }} where {{ mutable_version_is_null(definition) }} limit 5
{%- endmacro %}


{#-- Keys that appear more than once (no version column), or more than once at their
     highest version (with a version column). --#}
{% macro get_batch_duplicate_key_sql(definition, batch_source, tenant) -%}
  {%- set key = mutable_batch_key(definition) -%}
  {%- set version = definition.version_column -%}
  with stamped as (
    select {{ mutable_tenant_expr(definition, tenant) }} as tenant_id, *
    from {{ batch_source }}
  ),
  candidates as (
    {%- if version %}
    select * from (
      select tenant_id{% for k in key %}, {{ adapter.quote_column(k) }}{% endfor %}, {{ mutable_version_list(definition) }},
        rank() over (partition by tenant_id{% for k in key %}, {{ adapter.quote_column(k) }}{% endfor %}
                     order by {{ mutable_version_expr(definition) }} desc) as version_rank
      from stamped
    ) where version_rank = 1
    {%- else %}
    select * from stamped
    {%- endif %}
  )
  select tenant_id{% for k in key %}, {{ adapter.quote_column(k) }}{% endfor %}
    {%- if version %}, {{ mutable_version_list(definition) }}{% endif %}, count(*) as row_count
  from candidates
  group by tenant_id{% for k in key %}, {{ adapter.quote_column(k) }}{% endfor %}{% if version %}, {{ mutable_version_list(definition) }}{% endif %}
  having count(*) > 1
  limit 5
{%- endmacro %}


{#-- The batch ranked within each key: `_rn`, a row's place among its key's rows (highest
     version first), and with a version column `_version_above`, the version of the row
     ranked above it. `stamped_sql` outputs tenant_id; a key's rows are split by tenant
     only where tenants differ within the run (an unbound tenant_from run). One window:
     one shuffle of the batch. --#}
{% macro mutable_ranked_batch_sql(definition, stamped_sql, key, tenant) -%}
  {%- set q = adapter.mutable_planner(definition).quoted -%}
  {%- set version = definition.version_column -%}
  select *,
    row_number() over batch_key as _rn
    {%- if version %},
    lag({{ mutable_version_expr(definition) }}) over batch_key as _version_above
    {%- endif %}
  from (
    {{ stamped_sql }}
  ) as stamped
  window batch_key as (partition by {{ 'tenant_id, ' if definition.tenant_from and tenant is none }}{% for k in key %}{{ q[k] }}{{ ', ' if not loop.last }}{% endfor %}
    order by {% if version %}{{ mutable_version_expr(definition) }} desc{% else %}{% for k in key %}{{ q[k] }}{{ ', ' if not loop.last }}{% endfor %}{% endif %})
{%- endmacro %}


{#-- True for a ranked row (mutable_ranked_batch_sql) that duplicates its key: a key's
     second row (no version column), or a second row at the key's highest version. --#}
{% macro mutable_duplicate_row_predicate(definition) -%}
  _rn = 2{% if definition.version_column %} and _version_above = {{ mutable_version_expr(definition) }}{% endif %}
{%- endmacro %}


{#-- The stamped batch (stamped_sql), one row per key (its highest version), every row
     checked on the way: a NULL key or version, or a key's second row (at its highest
     version), raises the check's marked error (planner_rules.py's batch_check_error), which stops
     the statement that reads it before it writes anything. One window, one shuffle. --#}
{% macro mutable_checked_batch_sql(definition, stamped_sql, tenant) -%}
{%- set rules = adapter.mutable_planner(definition) -%}
{%- set q = rules.quoted -%}
{%- set key = definition.storage_key -%}
{%- set version = definition.version_column -%}
select * from (
  {{ mutable_ranked_batch_sql(definition, stamped_sql, key, tenant) }}
) as ranked
where case
  when {% for k in key %}{{ q[k] }} is null{{ ' or ' if not loop.last }}{% endfor %} then {{ rules.batch_check_error('null_key') }}
  {%- if version %}
  when {{ mutable_version_is_null(definition) }} then {{ rules.batch_check_error('null_version') }}
  {%- endif %}
  when {{ mutable_duplicate_row_predicate(definition) }} then {{ rules.batch_check_error('duplicate_version' if version else 'duplicate_key') }}
  else _rn = 1
end
{%- endmacro %}



{#-- Which key rules the batch breaks, in one pass over one evaluation of the batch: one
     row of flags (null_key, null_version, duplicate), each true when some row breaks it.
     The samples are read only when a flag is set. --#}
{% macro get_batch_check_flags_sql(definition, batch_source, tenant) -%}
  {%- set q = adapter.mutable_planner(definition).quoted -%}
  {%- set key = mutable_batch_key(definition) -%}
  {%- set version = definition.version_column -%}
  {%- set stamped_sql = 'select ' ~ mutable_tenant_expr(definition, tenant) ~ ' as tenant_id, * from ' ~ batch_source -%}
  select
    coalesce(max({% for k in key %}{{ q[k] }} is null{{ ' or ' if not loop.last }}{% endfor %}), false) as null_key,
    coalesce(max({{ mutable_version_is_null(definition) if version else 'false' }}), false) as null_version,
    coalesce(max({{ mutable_duplicate_row_predicate(definition) }}), false) as duplicate
  from (
    {{ mutable_ranked_batch_sql(definition, stamped_sql, key, tenant) }}
  ) as ranked
{%- endmacro %}


{#-- Fail the run (nothing written yet) if the batch breaks a key rule: one query tells
     whether it does; only then are the samples of the broken rule read for the error
     message. Rows identical in every column are one change (at-least-once delivery,
     mutable_table/redelivery.py): when the only rule broken is duplicate keys, the
     collapsed batch is checked, and returned if it passes. Returns {batch_source: the
     batch the run goes on with, collapsed: the rows collapsed, or none}. --#}
{% macro apply_mutable_batch_checks(definition, batch_source, tenant, redelivery) -%}
  {%- set flags = run_query(get_batch_check_flags_sql(definition, batch_source, tenant)).rows[0] -%}
  {%- if flags[2] and not flags[0] and not flags[1] and batch_source != redelivery.collapsed_source -%}
    {{ return(apply_mutable_collapsed_batch_checks(definition, batch_source, tenant, redelivery)) }}
  {%- endif -%}
  {%- if flags[0] or flags[1] or flags[2] -%}
    {%- do raise_mutable_batch_error(definition, batch_source, tenant) -%}
  {%- endif -%}
  {{ return({'batch_source': batch_source, 'collapsed': none}) }}
{%- endmacro %}


{#-- The collapsed batch (identical rows as one), checked: returned with the number of
     rows collapsed, or the run fails with the samples of what still breaks a rule. --#}
{% macro apply_mutable_collapsed_batch_checks(definition, batch_source, tenant, redelivery) -%}
  {%- set collapsed_source = redelivery.collapsed_source -%}
  {%- set flags = run_query(get_batch_check_flags_sql(definition, collapsed_source, tenant)).rows[0] -%}
  {%- if flags[0] or flags[1] or flags[2] -%}
    {%- do raise_mutable_batch_error(definition, collapsed_source, tenant) -%}
  {%- endif -%}
  {%- set collapsed = fetch_collapsed_row_count(batch_source, collapsed_source) -%}
  {%- do log("mutable_table '" ~ model.name ~ "': " ~ collapsed ~ " batch row(s) identical to another taken as one (at-least-once delivery)", info=true) -%}
  {{ return({'batch_source': collapsed_source, 'collapsed': collapsed}) }}
{%- endmacro %}


{#-- How many rows collapsing identical rows took away. --#}
{% macro fetch_collapsed_row_count(batch_source, collapsed_source) -%}
  {%- set sql = 'select (select count(*) from ' ~ batch_source ~ ' as delivered) - (select count(*) from ' ~ collapsed_source ~ ' as collapsed)' -%}
  {{ return(run_query(sql).rows[0][0] | int) }}
{%- endmacro %}


{#-- The error of a batch that breaks a key rule, with up to 5 sample rows of the first
     rule broken. Raises in any case. --#}
{% macro raise_mutable_batch_error(definition, batch_source, tenant, kind=none) -%}
  {%- set versions = "'" ~ mutable_version_list(definition) | replace('`', "") | replace(", ", "', '") ~ "'" -%}
  {%- set checks = [{'kind': 'null_key', 'sql': get_batch_null_key_sql(definition, batch_source)}] -%}
  {%- if definition.version_column -%}
    {%- do checks.append({'kind': 'null_version', 'sql': get_batch_null_version_sql(definition, batch_source), 'detail': versions}) -%}
  {%- endif -%}
  {%- set duplicate_kind = 'duplicate_version' if definition.version_column else 'duplicate_key' -%}
  {%- do checks.append({'kind': duplicate_kind, 'sql': get_batch_duplicate_key_sql(definition, batch_source, tenant), 'detail': versions}) -%}
  {#-- without samples (the model's output changed between two reads): the kind alone --#}
  {%- do adapter.mutable_batch_failure(model.name, checks, kind or duplicate_kind) -%}
{%- endmacro %}


{#-- Values of a unique index that more than one row of the next state would hold (per
     tenant; rows with a NULL index column do not collide, as in SQL). --#}
{#-- With history: scd2 a unique index constrains the current (open) rows, unless it
     names valid_from or valid_to itself: then it constrains every interval. --#}
{% macro get_unique_index_violations_sql(definition, index, next_state_sql) -%}
  {%- set open_rows_only = definition.history == 'scd2'
        and definition.valid_from not in index.columns and definition.valid_to not in index.columns -%}
  select tenant_id{% for c in index.columns %}, {{ adapter.quote_column(c) }}{% endfor %}, count(*) as row_count
  from ({{ next_state_sql }}) as next_state
  where {% for c in index.columns %}{{ adapter.quote_column(c) }} is not null{{ ' and ' if not loop.last }}{% endfor %}
  {%- if open_rows_only %} and {{ adapter.quote_column(definition.valid_to) }} is null{% endif %}
  group by tenant_id{% for c in index.columns %}, {{ adapter.quote_column(c) }}{% endfor %}
  having count(*) > 1
  limit 5
{%- endmacro %}


{% macro apply_unique_index_checks(definition, target_relation, change_set_relation, run_relations=[]) -%}
  {%- set checks = [] -%}
  {%- for index in definition.indexes if index.unique -%}
    {%- set next_state_sql = get_next_state_sql(definition, target_relation, change_set_relation) -%}
    {%- do checks.append({'kind': 'unique_index', 'sql': get_unique_index_violations_sql(definition, index, next_state_sql), 'detail': "'" ~ index.name ~ "' (" ~ index.columns | join(', ') ~ ")", 'unplanned': true}) -%}
  {%- endfor -%}
  {%- if checks -%}
    {%- do adapter.mutable_batch_failure(definition.table_id, checks, none, get_drop_run_relations_sql(run_relations)) -%}
  {%- endif -%}
{%- endmacro %}
