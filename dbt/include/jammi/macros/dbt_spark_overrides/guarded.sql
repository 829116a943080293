{#-- dbt's own materializations for jammi: dbt-spark's, behind the tenant read guard.
     In a run bound to a tenant (profile `tenant` / var `jammi_tenant`), a model that
     reads a mutable table or topic without tenant_scoped() fails before it runs instead
     of silently seeing other tenants' rows. Unbound runs are unaffected. A Python model
     (table, incremental) runs on the embedded session: its DataFrame, checked by the
     same guard, is the batch dbt-spark's SQL path writes (python_models.sql). --#}

{% materialization table, adapter='jammi', supported_languages=['sql', 'python'] %}
  {%- if jammi_python_model_batch() is none -%}{%- do jammi_check_tenant_reads() -%}{%- endif -%}
  {%- set result = materialization_table_spark() -%}
  {{ return(result) }}
{% endmaterialization %}

{% materialization view, adapter='jammi' %}
  {%- do jammi_check_tenant_reads() -%}
  {%- set result = materialization_view_spark() -%}
  {{ return(result) }}
{% endmaterialization %}

{% materialization incremental, adapter='jammi', supported_languages=['sql', 'python'] %}
  {%- if jammi_python_model_batch() is none -%}{%- do jammi_check_tenant_reads() -%}{%- endif -%}
  {%- set result = materialization_incremental_spark() -%}
  {{ return(result) }}
{% endmaterialization %}
