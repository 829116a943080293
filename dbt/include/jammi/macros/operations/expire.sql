{#-- dbt run-operation expire_mutable_table --args '{table: feature_counters}'

     Expires a mutable_table's aged rows without a batch, for tables whose model rarely
     runs: the same plan and commit as a run of the model with an empty output (so a
     concurrent run serializes with it the same way), under the table's recorded
     definition. `ttl_ms` overrides the configured age for this operation only (the table
     must have TTL configured: its age column is what makes rows comparable); `schema`
     defaults to the target's. A bound tenant only expires its own rows.
     docs/mutable_table.md#expiring-rows --#}

{% macro expire_mutable_table(table, schema=none, ttl_ms=none) -%}
  {%- set relation = load_relation(api.Relation.create(schema=schema or target.schema, identifier=table, type='table')) -%}
  {%- set subject = "expire_mutable_table '" ~ (schema or target.schema) ~ "." ~ table ~ "'" -%}
  {%- if relation is none -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": no such table.\n  Fix: name a mutable_table of the schema (args: table, schema)") -%}
  {%- endif -%}
  {%- set state = fetch_mutable_table_state(relation, subject) -%}
  {%- set tenant = jammi_bound_tenant() -%}
  {#-- the recorded definition with this operation's ttl_ms, its changelog prepared (a
       changelog table publishes what it expires, like any committed version), and the
       plan (run_service.py) --#}
  {%- set expiry = adapter.mutable_expire_start(table, relation, state, ttl_ms, jammi_versions_kept_of(relation)) -%}
  {%- set definition = expiry.definition -%}
  {%- set plan = expiry.plan -%}
  {%- set run_id = expiry.run_id -%}
  {%- do adapter.tenant_guard_trust(true) -%}
  {%- set batch_source = '(' ~ mutable_empty_batch_sql(definition) ~ ')' -%}
  {%- set applied = apply_mutable_batch_replanning(plan, definition, batch_source, relation, state, state.file_format, tenant, run_id) -%}
  {#-- the recorded definition stays what the model configured --#}
  {%- do adapter.mutable_record_definition(applied.state.definition, applied.state, relation, state.file_format, applied.outcome.location, config.get('registry_schema'), invocation_id) -%}
  {%- do drop_mutable_run_relations(applied.outcome.run_relations) -%}
  {%- do adapter.tenant_guard_trust(false) -%}
  {%- do log(subject ~ ": expired " ~ applied.outcome.counts.delete ~ " row(s)" ~ ((" of tenant " ~ tenant) if tenant else ""), info=true) -%}
  {{ return(applied.outcome.counts.delete) }}
{%- endmacro %}


{#-- A batch with the table's columns and no rows. --#}
{% macro mutable_empty_batch_sql(definition) -%}
  select
  {%- for c in definition.columns %}
    cast(null as {{ c[1] }}) as {{ adapter.quote_column(c[0]) }}{{ ',' if not loop.last }}
  {%- endfor %}
  where 1 = 0
{%- endmacro %}
