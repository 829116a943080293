{#-- Rewrite applier (parquet, orc): the complete next version of the table is written to
     a fresh version directory <table base>/v<version>_<run id>, then committed with ONE
     metastore operation, ALTER TABLE ... SET LOCATION. Until that call the table points
     at the previous version's files, which are never modified; after it, at the new
     ones. Leftover directories of failed runs are removed by the next committing run,
     which also keeps only the newest `versions_kept` versions (mutable_table/versions/kept_versions.py). --#}

{#-- The table after applying the change set: stored rows the change set does not
     replace or delete, plus its inserts and updates. target_relation none = empty. --#}
{% macro get_next_state_sql(definition, target_relation, change_set_relation) -%}
  {%- set q = adapter.quote_column -%}
  {%- set columns -%}
    {%- for c in definition.storage_columns %}{{ q(c[0]) }}, {% endfor %}tenant_id
  {%- endset -%}
  {%- if target_relation is not none %}
  select {% for c in definition.storage_columns %}t.{{ q(c[0]) }}, {% endfor %}t.tenant_id
  from {{ target_relation }} as t
  left anti join (
    select tenant_id{% for k in definition.storage_key %}, {{ q(k) }}{% endfor %}
    from {{ change_set_relation }} where _change in ('update', 'delete')
  ) as c
  on {{ mutable_key_match_clause(definition, 't', 'c') }}
  union all
  {%- endif %}
  select {{ columns }} from {{ change_set_relation }} where _change in ('insert', 'update')
{%- endmacro %}


{#-- Apply a change set to an existing parquet/orc table: its next state written as a new
     version beside `planned_location` (the version the plan was made from), swapped in
     by compare-and-swap -- of two runs that planned from the same version, at most one
     commits (adapter.mutable_commit_rewrite, commit/version_commit.py). On any failure
     this run's version directory and `cleanup` (its own run relations) are removed; the
     table keeps pointing at the version it had. Returns the committed location, or none
     when the commit lost to a concurrent run and `last_attempt` is false (the caller
     re-plans; nothing was committed). `tombstones_sql`: the version's live tombstones
     (rules/tombstone_phases.py), written into it. --#}
{% macro apply_rewrite(definition, target_relation, change_set_relation, file_format, planned_location, run_id, fail_at=none, cleanup=[], last_attempt=true, counts=none, kind='run', tombstones_sql=none) -%}
  {{ return(adapter.mutable_commit_rewrite(definition, target_relation, change_set_relation, get_next_state_sql(definition, target_relation, change_set_relation), file_format, planned_location, run_id, fail_at, cleanup, last_attempt, counts, invocation_id, kind, tombstones_sql)) }}
{%- endmacro %}

