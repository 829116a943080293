{#-- Tenant scope (docs/tenancy.md). Tenant values are data: they are only ever rendered
     through adapter.sql_string(), never spliced raw. --#}

{#-- The tenant this run is bound to (profile field `tenant`, var `jammi_tenant`), or none. --#}
{% macro jammi_bound_tenant() -%}
  {{ return(adapter.bound_tenant(var('jammi_tenant', none))) }}
{%- endmacro %}


{#-- `relation` as the bound tenant may see it: its own rows plus shared (NULL tenant)
     rows. Unbound runs see the relation as is. Use it wherever a model reads a
     tenant-scoped table:  from {{ tenant_scoped(ref('prices')) }} as p
     In a dbt unit test `relation` is the fixture given for it, scoped the same way (on
     its tenant_id column). --#}
{% macro tenant_scoped(relation) -%}
  {%- if execute -%}
    {%- do adapter.unit_test_fixture(model, relation, 'relation') -%}
  {%- endif -%}
  {{ return(adapter.dispatch('tenant_scoped', 'dbt')(relation)) }}
{%- endmacro %}

{% macro default__tenant_scoped(relation) -%}
  {{ adapter.tenant_scoped_sql(relation, jammi_bound_tenant()) }}
{%- endmacro %}


{#-- The tenant_id a batch row is stamped with: the bound tenant, else the tenant_from
     column, else NULL (a shared row). --#}
{% macro mutable_tenant_expr(definition, tenant) -%}
  {%- if tenant is not none -%}
    {{ adapter.sql_string(tenant) }}
  {%- elif definition.tenant_from -%}
    cast({{ adapter.quote_column(definition.tenant_from) }} as string)
  {%- else -%}
    cast(null as string)
  {%- endif -%}
{%- endmacro %}


{#-- The stored rows a run may change: a bound run only its tenant's rows; an unbound run
     with tenant_from every row (the model speaks for all tenants); otherwise the shared
     rows. Rows outside this scope are never in a change set. --#}
{% macro mutable_target_scope_clause(definition, tenant, alias=none) -%}
  {%- set column = (alias ~ '.' if alias else '') ~ 'tenant_id' -%}
  {%- if tenant is not none -%}
    {{ column }} = {{ adapter.sql_string(tenant) }}
  {%- elif definition.tenant_from -%}
    true
  {%- else -%}
    {{ column }} is null
  {%- endif -%}
{%- endmacro %}


{#-- In a run bound to a tenant, fail the current model now -- before its materialization
     writes anything -- when its SQL reads a tenant-scoped relation (a mutable table, a
     topic) without the adapter's scope and the adapter cannot scope it (a read by path,
     a view that does not pass tenant_id through). Every statement of a bound run is
     scoped and checked again when it runs (docs/tenancy.md); this early check is what
     keeps a rejected model from e.g. dropping the table it would have replaced.
     dbt's materializations for jammi call it; renders no SQL. --#}
{% macro jammi_check_tenant_reads() -%}
  {%- if execute -%}
    {%- do adapter.tenant_guard_scoped_sql(model.compiled_code or '') -%}
  {%- endif -%}
{%- endmacro %}


{#-- The model's SQL as this run may read it: in a bound run every read of a
     tenant-scoped relation scoped by the adapter (or the model fails here, before
     anything is written); unbound, `sql` itself. The jammi materializations inline the
     result into their own (trusted) statements. --#}
{% macro jammi_tenant_scoped_sql(sql) -%}
  {%- if not execute -%}{{ return(sql) }}{%- endif -%}
  {{ return(adapter.tenant_guard_scoped_sql(sql)) }}
{%- endmacro %}

