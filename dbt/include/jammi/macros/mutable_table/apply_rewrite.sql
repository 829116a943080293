{#-- Rewrite applier (parquet, orc): the complete next version of the table is written to
     a fresh version directory <table base>/v<version>_<run id>, then committed with ONE
     metastore operation, ALTER TABLE ... SET LOCATION. Until that call the table points
     at the previous version's files, which are never modified; after it, at the new
     ones. Leftover directories of failed runs are removed by the next committing run,
     which also keeps only the newest `versions_kept` versions (mutable_table/versions/kept_versions.py).
     The materialization commits an existing table's next version with
     adapter.mutable_commit('rewrite', ...) (commit/version_commit.py): written beside
     the version the plan was made from, swapped in by compare-and-swap -- of two runs
     that planned from the same version, at most one commits. On any failure this
     run's version directory and its run relations are removed; the table keeps
     pointing at the version it had. --#}

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
