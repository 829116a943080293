{#-- Truncates (docs/mutable_table.md#truncates): a stock feed from a warehouse database
     whose table was truncated and reloaded. The truncate row (op 't', no key) at lsn 3
     ends every key changed before it: sku 'a' is gone, and 'b''s count from before it
     too; the reload after it (lsn 4 and on) applies, and 'c''s later delete removes
     it. Re-sent, the batch changes nothing: the reload's versions are not newer than
     the stored ones, and the keys the truncate ended keep tombstones. --#}
{{ config(
    materialized='mutable_table',
    primary_key=['sku'],
    version_column='lsn',
    delete_when="op = 'd'",
    truncate_when="op = 't'"
) }}

select * from values
  ('a', 5, 1L, 'c'),
  ('b', 3, 2L, 'c'),
  (cast(null as string), cast(null as int), 3L, 't'),
  ('b', 4, 4L, 'r'),
  ('c', 1, 5L, 'r'),
  ('c', cast(null as int), 6L, 'd')
as t(sku, on_hand, lsn, op)
