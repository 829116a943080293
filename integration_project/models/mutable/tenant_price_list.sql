{#-- Each tenant's price list: products (mutable) x categories (table) x the tenant's
     currency from the per-tenant config lookup (mutable, tenant-scoped). In a run bound
     to a tenant (--vars '{jammi_tenant: acme}') every read of a tenant-scoped table
     shows only that tenant's rows plus the shared ones: tenant_scoped() says so
     explicitly, and a plain ref() (products below) is scoped by the adapter. --#}
{{ config(materialized='table', file_format=demo_table_format()) }}

with settings as (
  select tenant_id, setting, value from {{ tenant_scoped(ref('tenant_config')) }}
),
tenants as (
  select distinct tenant_id from settings where tenant_id is not null
),
currency as (
  -- a tenant's own setting wins over the shared default
  select t.tenant_id, coalesce(own.value, shared.value) as currency
  from tenants as t
  left join settings as own on own.tenant_id = t.tenant_id and own.setting = 'currency'
  left join settings as shared on shared.tenant_id is null and shared.setting = 'currency'
)

select
  c.tenant_id as tenant,
  p.product_id,
  p.sku,
  p.name,
  cat.display_name as category,
  cat.shelf,
  p.price,
  c.currency
from {{ ref('products') }} as p
join {{ ref('categories') }} as cat on cat.category = p.category
cross join currency as c
