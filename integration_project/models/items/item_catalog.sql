{#-- An ordinary table the dimension joins with: item names and departments. --#}
{{ config(materialized='table', file_format=demo_table_format()) }}

select * from values
  (501, 'trail shoe', 'footwear'),
  (502, 'rain jacket', 'outerwear'),
  (503, 'wool sock', 'footwear'),
  (504, 'head lamp', 'gear')
as t(item_id, item_name, department)
