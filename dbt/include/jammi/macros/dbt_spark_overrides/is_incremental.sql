{#-- dbt's is_incremental(), extended to mutable_table: true when the storage table
     already exists and this run is not rebuilding it, so a model can select only the
     source rows that changed since the last run. --#}
{% macro is_incremental() %}
  {% if not execute %}
    {{ return(False) }}
  {% endif %}
  {% set relation = adapter.get_relation(this.database, this.schema, this.table) %}
  {% if relation is none or relation.type != 'table' %}
    {{ return(False) }}
  {% endif %}
  {% if model.config.materialized == 'mutable_table' %}
    {{ return(not adapter.mutable_full_refresh_allowed(flags.FULL_REFRESH, config.get('full_refresh'))) }}
  {% endif %}
  {{ return(model.config.materialized == 'incremental' and not should_full_refresh()) }}
{% endmacro %}
