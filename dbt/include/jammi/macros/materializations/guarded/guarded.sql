{#-- dbt's own materializations for jammi: dbt-spark's, behind the tenant read guard.
     In a run bound to a tenant (profile `tenant` / var `jammi_tenant`), a model that
     reads a mutable table or topic without tenant_scoped() fails before it runs instead
     of silently seeing other tenants' rows. Unbound runs are unaffected. --#}

{% materialization table, adapter='jammi', supported_languages=['sql', 'python'] %}
  {%- do jammi_check_tenant_reads() -%}
  {%- set result = materialization_table_spark() -%}
  {{ return(result) }}
{% endmaterialization %}

{% materialization view, adapter='jammi' %}
  {%- do jammi_check_tenant_reads() -%}
  {%- set result = materialization_view_spark() -%}
  {{ return(result) }}
{% endmaterialization %}

{% materialization incremental, adapter='jammi', supported_languages=['sql', 'python'] %}
  {%- do jammi_check_tenant_reads() -%}
  {%- set result = materialization_incremental_spark() -%}
  {{ return(result) }}
{% endmaterialization %}
