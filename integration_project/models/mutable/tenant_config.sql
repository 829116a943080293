{#-- Per-tenant configuration lookup. One unbound load speaks for every tenant: the
     `tenant` column supplies each row's tenant_id (tenant_from); rows without a tenant
     are shared defaults every tenant sees through tenant_scoped(). --#}
{{ config(
    materialized='mutable_table',
    primary_key=['setting'],
    tenant_from='tenant',
    hard_deletes='delete'
) }}

select * from values
  (cast(null as string), 'currency', 'EUR', 'shared default'),
  (cast(null as string), 'vat_rate_bp', '2000', 'shared default'),
  ('acme', 'currency', 'USD', 'acme sells in dollars'),
  ('globex', 'currency', 'GBP', 'globex sells in pounds'),
  ('globex', 'vat_rate_bp', '2000', 'UK VAT')
as t(tenant, setting, value, note)
