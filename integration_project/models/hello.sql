select 1 as id, 'hello' as greeting
