{#-- customer_contacts: the listed email kept its known value over a NULL, the unlisted
     loyalty_tier took the NULL, and the two changes of customer 7 were counted. Fails
     with every row that differs. --#}
with expected as (
  select * from values
    (7, 'ada@example.com', '555-0199', cast(null as string), 2, 2),
    (8, 'bob@example.com', cast(null as string), 'silver', 1, 1)
  as t(customer_id, email, phone, loyalty_tier, changes, changed_at)
),
stored as (
  select customer_id, email, phone, loyalty_tier, changes, changed_at
  from {{ ref('customer_contacts') }}
)
(select 'missing' as problem, * from (select * from expected except select * from stored))
union all
(select 'unexpected' as problem, * from (select * from stored except select * from expected))
