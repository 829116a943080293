{#-- Generic test: the primary key of a mutable table is unique and not null per tenant.
       models:
         - name: prices
           data_tests:
             - mutable_primary_key:
                 columns: [sku]
     Failing rows: one per offending (tenant_id, key) with the number of rows holding it
     (a NULL in a key column is a failure too). --#}
{% test mutable_primary_key(model, columns) %}
  {{ return(adapter.dispatch('test_mutable_primary_key', 'dbt')(model, mutable_test_columns(columns, 'mutable_primary_key'))) }}
{% endtest %}

{% macro default__test_mutable_primary_key(model, columns) %}
select tenant_id{% for c in columns %}, {{ adapter.quote_column(c) }}{% endfor %}, count(*) as row_count
from {{ model }}
group by tenant_id{% for c in columns %}, {{ adapter.quote_column(c) }}{% endfor %}
having count(*) > 1{% for c in columns %} or {{ adapter.quote_column(c) }} is null{% endfor %}
{% endmacro %}


{% macro mutable_test_columns(columns, test_name) %}
  {%- if columns is string -%}{%- set columns = [columns] -%}{%- endif -%}
  {%- if not columns -%}
    {{ exceptions.raise_compiler_error(test_name ~ ": name the key columns, e.g. " ~ test_name ~ ": {columns: [id]}") }}
  {%- endif -%}
  {{ return(columns) }}
{% endmacro %}
