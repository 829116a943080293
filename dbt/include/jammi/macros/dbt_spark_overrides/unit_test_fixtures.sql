{#-- dbt unit tests: a fixture value its input column cannot hold exactly (3000000000
     for an int) is refused before the test runs, instead of Spark's cast silently giving
     the test another value (unit_testing/fixture_values.py). dbt calls this while it
     types each fixture, `this` being the relation the fixture stands for. --#}
{% macro jammi__validate_fixture_rows(rows, row_number) -%}
  {%- if execute and rows -%}
    {%- set relation = load_relation(this) -%}
    {%- if relation is not none -%}
      {%- do adapter.unit_test_check_fixture_values(this, rows, adapter.get_columns_in_relation(relation)) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
