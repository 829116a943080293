{#-- Offset invariants of a topic (docs/topic.md): each publish has one positive offset,
     (_offset, _row_idx) is unique and _row_idx runs 0..n-1 within a publish, and a
     publish has exactly one _produced_at. Returns the offsets that break a rule.
     contiguous=false (a topic with row_idx: ordered): _row_idx is unique and not
     negative, gaps allowed. --#}
{% test topic_offsets(model, contiguous=true) %}
with per_offset as (
  select
    _offset,
    count(*) as row_count,
    count(distinct _row_idx) as distinct_row_idx,
    min(_row_idx) as min_row_idx,
    max(_row_idx) as max_row_idx,
    count(distinct _produced_at) as produced_at_values,
    sum(case when _row_idx is null or _produced_at is null then 1 else 0 end) as null_engine_values
  from {{ model }}
  group by _offset
)
select *
from per_offset
where _offset is null
   or _offset < 1
   or distinct_row_idx <> row_count
   {%- if contiguous %}
   or min_row_idx <> 0
   or max_row_idx <> row_count - 1
   {%- else %}
   or min_row_idx < 0
   {%- endif %}
   or produced_at_values <> 1
   or null_engine_values > 0
{% endtest %}
