{#-- Adoption: a mutable_table model whose table another materialization built (table,
     incremental, or outside dbt) keeps that table and every row in it
     (mutable_table/adoption.py, docs/mutable_table.md "Existing relations"). The run
     checks the stored table first (format, key columns, no NULL or duplicate keys) and
     plans against it like any existing mutable table; once the batch has passed its
     checks it adds the tenant_id column (stored rows are shared rows) and the registry,
     and the run's commit records the definition on the table. --#}


{#-- The state of a table another materialization built (fetch_mutable_table_state's
     `adopt`): raises, before anything is written, when it cannot be adopted. --#}
{% macro fetch_adopted_table_state(relation, described, adopt) -%}
  {%- if adopt.get('rebuild') -%}
    {#-- the run drops it and starts from the model's output (drop_mutable_table): no
         version directories of its own to remove --#}
    {{ return({'properties': {}, 'file_format': none, 'location': none, 'definition': none,
               'property_stale': false, 'table_properties': {}, 'columns': []}) }}
  {%- endif -%}
  {%- set columns = adapter.columns_from_describe(relation, described) -%}
  {%- set plan = adapter.mutable_adoption_plan(model.name, relation, adopt.definition, described, columns, adapter.mutable_requested_file_format(model), adopt.tenant) -%}
  {%- do adapter.mutable_check_adopted_keys(model.name, relation, plan.key, run_query(plan.violations_sql)) -%}
  {%- set location = none if adapter.uses_merge(plan.file_format) else adapter.mutable_location(described) -%}
  {%- if location -%}
    {%- do run_query('refresh table ' ~ relation) -%}
  {%- endif -%}
  {{ return({'properties': {}, 'file_format': plan.file_format, 'location': location,
             'definition': none, 'property_stale': false,
             'table_properties': adapter.mutable_table_properties(described),
             'columns': columns,
             'adoption': adopt, 'adoption_plan': plan}) }}
{%- endmacro %}


{#-- What adoption adds before the run writes: the registry, and the tenant_id column
     (NULL: the stored rows are shared rows). Each step is idempotent, so a run stopped
     between them is completed by the next. --#}
{% macro apply_mutable_adoption(target_relation, state) -%}
  {%- set rows = run_query('select count(*) from ' ~ target_relation).rows[0][0] -%}
  {%- do log("mutable_table '" ~ model.name ~ "': adopting " ~ target_relation ~ " (built by another materialization) with its " ~ rows ~ " stored row(s); they are kept as shared rows (tenant_id NULL)", info=true) -%}
  {%- do adapter.mutable_execute_all_or_nothing([{'sql': get_create_mutable_registry_sql(mutable_registry_relation(target_relation), state.file_format), 'tolerate_exists': true}]) -%}
  {%- if state.adoption_plan.add_tenant_column -%}
    {%- do run_query(get_add_columns_sql(target_relation, [['tenant_id', 'string']])) -%}
  {%- endif -%}
{%- endmacro %}
