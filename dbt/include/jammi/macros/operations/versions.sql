{#-- Kept versions of a mutable_table: read one, list them, roll back to one.
     docs/versions.md. Each phase is one adapter call; the decisions and their statements
     live in mutable_table/versions/kept_version_phases.py. --#}


{#-- The model node named `model` and its relation, or a clear error. --#}
{% macro jammi_mutable_model(model_name, subject) -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | selectattr('name', 'equalto', model_name) | list -%}
  {%- if nodes | length == 0 -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": no model named '" ~ model_name ~ "' in this project.\n  Fix: pass the name of a mutable_table model, e.g. --args '{model: orders}'") -%}
  {%- endif -%}
  {%- set node = nodes[0] -%}
  {%- if node.config.materialized != 'mutable_table' -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": model '" ~ model_name ~ "' is materialized as " ~ node.config.materialized ~ ", not mutable_table; only mutable tables keep versions.\n  Fix: name a mutable_table model") -%}
  {%- endif -%}
  {%- set relation = load_relation(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias, type='table')) -%}
  {%- if relation is none -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": the table of model '" ~ model_name ~ "' does not exist yet.\n  Fix: dbt run --select " ~ model_name) -%}
  {%- endif -%}
  {#-- the model's settings as configured; each operation's call checks them --#}
  {{ return({'node': node, 'relation': relation, 'settings': {'versions_kept': node.config.get('versions_kept'), 'expire_snapshots': node.config.get('expire_snapshots')}}) }}
{%- endmacro %}


{#-- The versions_kept configured on the model whose table is `relation` (none when the
     relation is no model of this project: the default); the call it is passed to
     checks it. --#}
{% macro jammi_versions_kept_of(relation) -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | selectattr('alias', 'equalto', relation.identifier) | list -%}
  {{ return(nodes[0].config.get('versions_kept') if nodes | length > 0 else none) }}
{%- endmacro %}


{#-- {{ mutable_table_as_of(ref('orders'), version=12) }} or (timestamp='2026-01-31
     12:00:00' or epoch milliseconds): a FROM item with the table's rows as of a kept
     version, scoped to the bound tenant like tenant_scoped(). --#}
{% macro mutable_table_as_of(relation, version=none, timestamp=none) -%}
  {%- if not execute -%}{{ return('(select * from ' ~ relation ~ ')') }}{%- endif -%}
  {%- set subject = "mutable_table_as_of(" ~ relation ~ ")" -%}
  {%- if (version is none) == (timestamp is none) -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": pass exactly one of version= and timestamp=") -%}
  {%- endif -%}
  {%- set state = fetch_mutable_table_state(relation, subject) -%}
  {{ return(adapter.mutable_as_of(relation, state, jammi_versions_kept_of(relation), version, timestamp, jammi_bound_tenant(), subject)) }}
{%- endmacro %}


{#-- dbt run-operation mutable_table_history --args '{model: orders}' --#}
{% macro mutable_table_history(model) -%}
  {%- set subject = "mutable_table_history '" ~ model ~ "'" -%}
  {%- set found = jammi_mutable_model(model, subject) -%}
  {%- set state = fetch_mutable_table_state(found.relation, subject) -%}
  {%- set history = adapter.mutable_history(found.relation, state, found.settings, model) -%}
  {%- do log(subject ~ " (" ~ found.relation ~ ", " ~ state.file_format ~ ", versions_kept: " ~ history.versions_kept ~ "):\n" ~ history.table, info=true) -%}
  {{ return(history.rows) }}
{%- endmacro %}


{#-- dbt run-operation rollback_mutable_table --args '{model: orders, to_version: 12}'

     Makes kept version `to_version`'s rows the table's rows as a NEW version, committed
     like a run: parquet/orc as a change set (the difference between the current rows
     and the kept version's) through the run's own rewrite path -- version claim,
     version log, changelog staging; Delta with one MERGE from VERSION AS OF (its
     conflict detection). A rollback that loses its commit to a concurrent run fails
     with "re-run" (it never re-plans on its own). Iceberg with expire_snapshots: the
     snapshots beyond versions_kept are expired after it, as after a run. An admin
     action: refused in a tenant-bound run. --#}
{% macro rollback_mutable_table(model, to_version) -%}
  {%- set subject = "rollback_mutable_table '" ~ model ~ "'" -%}
  {%- if jammi_bound_tenant() is not none -%}
    {%- do exceptions.raise_compiler_error(subject ~ ": refused in a run bound to a tenant (rollback replaces every tenant's rows); nothing was changed.\n  Fix: run it unbound (no profile tenant, no var jammi_tenant)") -%}
  {%- endif -%}
  {%- set found = jammi_mutable_model(model, subject) -%}
  {%- set relation = found.relation -%}
  {%- set state = fetch_mutable_table_state(relation, subject) -%}
  {%- set file_format = state.file_format -%}
  {%- set plan = adapter.mutable_rollback_plan(state.definition, relation, state, found.settings, to_version, model, subject) -%}
  {%- set version = plan.version -%}
  {%- do adapter.tenant_guard_trust(true) -%}
  {%- set definition = adapter.mutable_changelog_prepare(plan.definition, relation, state, file_format) -%}
  {%- if plan.uses_merge -%}
    {#-- one call (rollback_service.py): the changelog repaired, the MERGE committed, later
         tombstones dropped, the changelog published, snapshots expired --#}
    {%- set counts = adapter.mutable_rollback_merge(definition, relation, state, plan, model, plan.expire_snapshots) -%}
  {%- else -%}
    {#-- one call (rollback_service.py): the changelog repaired, the difference staged and
         committed as a new version with the kept version's tombstones, published,
         recorded --#}
    {%- set run_id = plan.run_id -%}
    {%- set staging = mutable_staging_relation(relation, run_id) -%}
    {%- set counts = adapter.mutable_rollback_rewrite(definition, relation, state, plan, staging, run_id, get_next_state_sql(definition, relation, staging), config.get('registry_schema'), invocation_id) -%}
  {%- endif -%}
  {%- do adapter.tenant_guard_trust(false) -%}
  {%- do log(subject ~ ": " ~ relation ~ " now holds the rows of version " ~ version ~ " as a new version (" ~ counts.message ~ ")", info=true) -%}
  {{ return(counts) }}
{%- endmacro %}
