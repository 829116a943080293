{#-- docs/topic.md's replay example: deletes per hour, straight off the backing table. --#}
{{ config(materialized='table', file_format=demo_table_format()) }}

select date_trunc('hour', timestamp_micros(_produced_at)) as hour, count(*) as deletes
from {{ topic_backing_table(ref('cdc_orders')) }}
where op = 'd'
group by 1
order by 1
