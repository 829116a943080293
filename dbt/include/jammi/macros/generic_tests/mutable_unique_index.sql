{#-- Generic test: a unique secondary index holds -- no two rows of one tenant share the
     index columns' values (rows with a NULL in them do not collide).
       data_tests:
         - mutable_unique_index:
             columns: [sku_code] --#}
{% test mutable_unique_index(model, columns) %}
  {{ return(adapter.dispatch('test_mutable_unique_index', 'dbt')(model, mutable_test_columns(columns, 'mutable_unique_index'))) }}
{% endtest %}

{% macro default__test_mutable_unique_index(model, columns) %}
select tenant_id{% for c in columns %}, {{ adapter.quote_column(c) }}{% endfor %}, count(*) as row_count
from {{ model }}
where {% for c in columns %}{{ adapter.quote_column(c) }} is not null{{ ' and ' if not loop.last }}{% endfor %}
group by tenant_id{% for c in columns %}, {{ adapter.quote_column(c) }}{% endfor %}
having count(*) > 1
{% endmacro %}
