{#-- Python models (def model(dbt, session)) on the embedded session
     (docs/python_models.md). The model's program runs in dbt's process at the start of
     its materialization; the DataFrame it returns, checked by the tenant guard, is read
     through a temporary view by the same statements a SQL model's output would be; the
     adapter drops the view when the node ends (post_model_hook), failed or not. Over thrift, http and odbc a Python model stops here,
     before any SQL. --#}


{#-- For a Python model: run its program and return the query that reads its DataFrame
     (none for a SQL model). The materializations that run after this one in the same
     node (dbt-spark's table and incremental, wrapped by guarded.sql) then see that
     query as the model's code and the model as a SQL model, and take their SQL path:
     file_format, partition_by, tblproperties, location, on_schema_change and every
     incremental strategy as for SQL. --#}
{% macro jammi_python_model_batch() -%}
  {%- if model.language != 'python' or not execute -%}{{ return(none) }}{%- endif -%}
  {%- set batch_sql = adapter.python_model_batch_sql(model, compiled_code) -%}
  {%- do context.update({'compiled_code': batch_sql, 'sql': batch_sql}) -%}
  {%- do model.update({'language': 'sql'}) -%}
  {{ return(batch_sql) }}
{%- endmacro %}
