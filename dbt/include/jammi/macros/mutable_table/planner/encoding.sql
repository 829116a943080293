{#-- Encodings for types outside the closed set (docs/mutable_table.md). `expr` is SQL. --#}

{#-- A timestamp or date as bigint epoch milliseconds (dates: midnight UTC when the
     session time zone is UTC, the embedded default). --#}
{% macro to_epoch_millis(expr) -%}
  {{ return(adapter.dispatch('to_epoch_millis', 'dbt')(expr)) }}
{%- endmacro %}

{% macro default__to_epoch_millis(expr) -%}
  unix_millis(cast({{ expr }} as timestamp))
{%- endmacro %}


{#-- A decimal as a bigint scaled by 10^scale (rounded half up): 12.345 at scale 2 -> 1235.
     Decode with  value / power(10, scale)  or  cast(value as decimal(p, scale)) / 10^scale. --#}
{% macro to_scaled_bigint(expr, scale) -%}
  {{ return(adapter.dispatch('to_scaled_bigint', 'dbt')(expr, scale)) }}
{%- endmacro %}

{% macro default__to_scaled_bigint(expr, scale) -%}
  {%- if scale is not integer or scale < 0 or scale > 18 -%}
    {{ exceptions.raise_compiler_error("to_scaled_bigint: scale must be a whole number from 0 to 18, got " ~ scale) }}
  {%- endif -%}
  cast(round(cast({{ expr }} as decimal(38, {{ scale }})) * {{ 10 ** scale }}, 0) as bigint)
{%- endmacro %}
