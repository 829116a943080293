{#-- Every order's history as a dbt snapshot (docs/snapshots.md), beside the mutable
     tables: the check strategy over current_orders, whose deletes (a 'd' event in
     cdc_orders) close the order's open row (hard_deletes: invalidate). dbt-spark
     snapshots store Delta or Iceberg tables, so it is built by the delta and iceberg
     targets (`make demo-delta`, `make demo-iceberg`) only. --#}
{% snapshot order_history %}
{{ config(
    enabled=target.name in ['delta', 'iceberg'],
    file_format='iceberg' if target.name == 'iceberg' else 'delta',
    target_schema=target.schema,
    unique_key='order_id',
    strategy='check',
    check_cols=['sku', 'amount_cents', 'status'],
    hard_deletes='invalidate'
) }}
select order_id, sku, amount_cents, status from {{ ref('current_orders') }}
{% endsnapshot %}
