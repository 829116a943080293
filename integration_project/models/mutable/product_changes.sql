{#-- The product service's change feed, as it arrives in batches. `batch` is when a
     change arrives; updated_at is its version (a late batch can carry an older change). --#}
{{ config(materialized='view') }}

select * from values
  -- batch 1: initial catalogue
  (1, 101, 'SKU-APPLE', 'apple', 'fruit', 120.50, false, timestamp'2024-01-01 08:00:00'),
  (1, 102, 'SKU-PEAR', 'pear', 'fruit', 99.00, false, timestamp'2024-01-01 08:00:00'),
  (1, 103, 'SKU-KALE', 'kale', 'vegetable', 250.00, false, timestamp'2024-01-01 08:00:00'),
  -- batch 2: a price change, a new product, and a late, older change that must lose
  (2, 101, 'SKU-APPLE', 'apple', 'fruit', 125.00, false, timestamp'2024-01-02 08:00:00'),
  (2, 104, 'SKU-PLUM', 'plum', 'fruit', 80.25, false, timestamp'2024-01-02 09:00:00'),
  (2, 102, 'SKU-PEAR', 'pear', 'fruit', 10.00, false, timestamp'2023-12-31 23:00:00'),
  -- batch 3: kale is discontinued (deleted), pear gets cheaper
  (3, 103, 'SKU-KALE', 'kale', 'vegetable', 250.00, true, timestamp'2024-01-03 08:00:00'),
  (3, 102, 'SKU-PEAR', 'pear', 'fruit', 95.00, false, timestamp'2024-01-03 08:00:00')
as t(batch, product_id, sku, name, category, price, is_deleted, updated_at)
