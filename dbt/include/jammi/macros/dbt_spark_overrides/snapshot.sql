{#-- dbt snapshots' `hard_deletes: new_record` (docs/snapshots.md). dbt's snapshot staging
     query copies a deleted row's values into its deletion record by the names that
     get_columns_in_relation() gives for the snapshot table, reading each column's
     `.name`. dbt-spark's macro returns DESCRIBE's rows instead, which have no `.name`:
     no column matched, and every deletion record held NULL in each of the row's own
     columns (its key included), so a returning key never closed it. Inside a snapshot
     the macro gives dbt's columns, as dbt's contract has it; everywhere else it is
     dbt-spark's, unchanged. --#}
{% macro jammi__get_columns_in_relation(relation) -%}
  {%- if model is mapping and model.get('resource_type') == 'snapshot' -%}
    {% do return(adapter.get_columns_in_relation(relation)) %}
  {%- endif -%}
  {% do return(spark__get_columns_in_relation(relation)) %}
{%- endmacro %}
