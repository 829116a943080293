{#-- An ordinary table model the mutable tables join with. --#}
{{ config(materialized='table', file_format=demo_table_format()) }}

select * from values
  ('fruit', 'Fresh fruit', 1),
  ('vegetable', 'Vegetables', 2)
as t(category, display_name, shelf)
