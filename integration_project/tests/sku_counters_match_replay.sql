{#-- sku_order_counters (merge_functions) equals a replay of every stored cdc.orders
     event: the counts, sums and first/last times of each sku. Fails with the skus
     that differ. Holds while retention has removed no event of the topic (offset 1 is
     still stored); after that the replay no longer has every event the counters saw. --#}
with replay as (
  select sku,
         count(*) as order_events,
         sum(coalesce(amount_cents, 0)) as amount_cents_total,
         min(_produced_at div 1000) as first_event_ms,
         max(_produced_at div 1000) as last_event_ms,
         min_by(status, _offset * 1000000 + _row_idx) as first_status
  from {{ topic_backing_table(ref('cdc_orders')) }}
  group by sku
),

complete as (
  select min(_offset) = 1 as complete from {{ topic_backing_table(ref('cdc_orders')) }}
)

select coalesce(r.sku, c.sku) as sku
from replay as r
full outer join {{ ref('sku_order_counters') }} as c on r.sku = c.sku
where (select complete from complete)
  and not (r.order_events <=> c.order_events
           and r.amount_cents_total <=> c.amount_cents_total
           and r.first_event_ms <=> c.first_event_ms
           and r.last_event_ms <=> c.last_event_ms
           and r.first_status <=> c.first_status)
