{#-- Adoption: a mutable_table model whose table another materialization built (table,
     incremental, or outside dbt) keeps that table and every row in it
     (mutable_table/adoption.py, docs/mutable_table.md "Existing relations"). The run
     checks the stored table first (format, key columns, no NULL or duplicate keys;
     adapter.mutable_table_state with `adopt`) and
     plans against it like any existing mutable table; once the batch has passed its
     checks it adds the tenant_id column (stored rows are shared rows) and the registry,
     and the run's commit records the definition on the table. --#}


{#-- What adoption adds before the run writes: the registry, and the tenant_id column
     (NULL: the stored rows are shared rows). Each step is idempotent, so a run stopped
     between them is completed by the next. --#}
{% macro apply_mutable_adoption(target_relation, state, definition) -%}
  {%- set rows = run_query('select count(*) from ' ~ target_relation).rows[0][0] -%}
  {%- do log("mutable_table '" ~ model.name ~ "': adopting " ~ target_relation ~ " (built by another materialization) with its " ~ rows ~ " stored row(s); they are kept as shared rows (tenant_id NULL)", info=true) -%}
  {%- set records = adapter.mutable_table_records(definition, target_relation, state.file_format, config.get('registry_schema'), invocation_id) -%}
  {%- do adapter.mutable_execute_all_or_nothing([{'sql': records.create_registry, 'tolerate_exists': true}]) -%}
  {%- if state.adoption_plan.add_tenant_column -%}
    {%- do run_query(get_add_columns_sql(target_relation, [['tenant_id', 'string']])) -%}
  {%- endif -%}
{%- endmacro %}
