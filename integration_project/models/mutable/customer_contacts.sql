{#-- Partial updates of listed columns (docs/mutable_table.md#partial-updates): a contacts
     feed whose changes carry only what changed. A NULL email or phone keeps the value
     already known; loyalty_tier is not listed, so a NULL there clears it. Customer 7's
     two changes arrive in one batch and combine (merge_functions counts them): the
     newest non-NULL email, the newest phone, the newest tier (NULL). Re-sent, the batch
     changes nothing (its versions are not newer than the stored ones). --#}
{{ config(
    materialized='mutable_table',
    primary_key=['customer_id'],
    version_column='changed_at',
    partial_updates=['email', 'phone'],
    merge_functions={'changes': 'sum'}
) }}

select * from values
  (7, 'ada@example.com', '555-0100', 'gold', 1, 1),
  (7, cast(null as string), '555-0199', cast(null as string), 1, 2),
  (8, 'bob@example.com', cast(null as string), 'silver', 1, 1)
as t(customer_id, email, phone, loyalty_tier, changes, changed_at)
