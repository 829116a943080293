{#-- Generic tests for history: scd2 tables (docs/scd2.md).

     scd2_valid_history checks all three interval invariants per effective key
     (tenant_id + primary key); the three checks also ship as tests of their own:
       scd2_one_open_row          at most one open row (valid_to NULL) per key
       scd2_no_overlapping_intervals  intervals of one key do not overlap
       scd2_valid_interval_bounds  valid_from is set and valid_from < valid_to

       models:
         - name: item_dimensions
           data_tests:
             - scd2_valid_history:
                 columns: [item_id]          # the primary key
                 # valid_from: valid_from    # defaults
                 # valid_to: valid_to

     Failing rows: tenant_id, the key, valid_from, valid_to (as text: one union of the
     three checks whatever the interval type, epoch milliseconds or timestamps) and
     `invariant` naming the broken rule. --#}

{% test scd2_valid_history(model, columns, valid_from='valid_from', valid_to='valid_to') %}
  {{ return(adapter.dispatch('test_scd2_valid_history', 'dbt')(
      model, mutable_test_columns(columns, 'scd2_valid_history'), valid_from, valid_to)) }}
{% endtest %}

{% test scd2_one_open_row(model, columns, valid_from='valid_from', valid_to='valid_to') %}
  {{ return(scd2_one_open_row_sql(model, mutable_test_columns(columns, 'scd2_one_open_row'), valid_from, valid_to)) }}
{% endtest %}

{% test scd2_no_overlapping_intervals(model, columns, valid_from='valid_from', valid_to='valid_to') %}
  {{ return(scd2_no_overlapping_intervals_sql(model, mutable_test_columns(columns, 'scd2_no_overlapping_intervals'), valid_from, valid_to)) }}
{% endtest %}

{% test scd2_valid_interval_bounds(model, columns, valid_from='valid_from', valid_to='valid_to') %}
  {{ return(scd2_valid_interval_bounds_sql(model, mutable_test_columns(columns, 'scd2_valid_interval_bounds'), valid_from, valid_to)) }}
{% endtest %}


{% macro default__test_scd2_valid_history(model, columns, valid_from, valid_to) %}
{{ scd2_one_open_row_sql(model, columns, valid_from, valid_to) }}
union all
{{ scd2_no_overlapping_intervals_sql(model, columns, valid_from, valid_to) }}
union all
{{ scd2_valid_interval_bounds_sql(model, columns, valid_from, valid_to) }}
{% endmacro %}


{#-- keys holding more than one open row (each open row is reported) --#}
{% macro scd2_one_open_row_sql(model, columns, valid_from, valid_to) -%}
{%- set q = adapter.quote_column -%}
select tenant_id{% for c in columns %}, {{ q(c) }}{% endfor %},
  cast({{ q(valid_from) }} as string) as valid_from, cast({{ q(valid_to) }} as string) as valid_to,
  'more than one open row' as invariant
from (
  select *, count(*) over (partition by tenant_id{% for c in columns %}, {{ q(c) }}{% endfor %}) as open_rows
  from {{ model }}
  where {{ q(valid_to) }} is null
) as open_rows_per_key
where open_rows > 1
{%- endmacro %}


{#-- rows whose interval reaches past the next interval's start (an open row followed by
     another row, or two rows starting at the same time, overlap too) --#}
{% macro scd2_no_overlapping_intervals_sql(model, columns, valid_from, valid_to) -%}
{%- set q = adapter.quote_column -%}
select tenant_id{% for c in columns %}, {{ q(c) }}{% endfor %},
  cast({{ q(valid_from) }} as string) as valid_from, cast({{ q(valid_to) }} as string) as valid_to,
  'overlaps the next interval' as invariant
from (
  select *, lead({{ q(valid_from) }}) over (
      partition by tenant_id{% for c in columns %}, {{ q(c) }}{% endfor %}
      order by {{ q(valid_from) }}, {{ q(valid_to) }} nulls last) as next_valid_from
  from {{ model }}
) as with_next
where next_valid_from is not null
  and ({{ q(valid_to) }} is null or {{ q(valid_to) }} > next_valid_from or {{ q(valid_from) }} = next_valid_from)
{%- endmacro %}


{#-- rows whose bounds are not an interval: valid_from NULL, or valid_to <= valid_from --#}
{% macro scd2_valid_interval_bounds_sql(model, columns, valid_from, valid_to) -%}
{%- set q = adapter.quote_column -%}
select tenant_id{% for c in columns %}, {{ q(c) }}{% endfor %},
  cast({{ q(valid_from) }} as string) as valid_from, cast({{ q(valid_to) }} as string) as valid_to,
  'valid_from is not before valid_to' as invariant
from {{ model }}
where {{ q(valid_from) }} is null
  or ({{ q(valid_to) }} is not null and not ({{ q(valid_from) }} < {{ q(valid_to) }}))
{%- endmacro %}
