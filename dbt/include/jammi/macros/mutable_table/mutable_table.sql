{#-- mutable_table: the model's output is a change batch applied row by row by key.
     Phases: setup -> batch (validate) -> plan (change set) -> apply (create | merge |
     rewrite) -> finish (properties, registry, cleanup, docs, hooks). docs/mutable_table.md --#}

{% materialization mutable_table, adapter='jammi', supported_languages=['sql', 'python'] %}

  {#-- 1. setup; a Python model's program runs first, and its DataFrame is the batch
       (python_models.sql): every step below reads it like a SQL model's output --#}
  {%- set compiled_code = jammi_python_model_batch() or compiled_code -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_relation(this) -%}
  {#-- a view holds no state: the model takes its name (dropped once the batch has passed
       its checks, below) and the run is a first run --#}
  {%- set replaced_view = existing_relation if existing_relation is not none and existing_relation.is_view else none -%}
  {%- set existing_relation = none if replaced_view is not none else existing_relation -%}
  {%- set tenant = jammi_bound_tenant() -%}
  {#-- in a bound run, the model's SQL with its tenant-scoped reads scoped (or the run
       fails here); it is inlined in this node's own statements, which read the whole
       table to plan and rewrite it and so run trusted until the post-hooks --#}
  {%- set compiled_code = jammi_tenant_scoped_sql(compiled_code) -%}
  {{ run_hooks(pre_hooks) }}
  {%- do adapter.tenant_guard_trust(true) -%}

  {#-- 2. the run's start (run_start.py), one call, nothing written: the batch's columns
       and the model's definition; the stored table (or a table another materialization
       built, adopted keeping its rows: adapter.mutable_adopt); the definition the run applies,
       its schema changes and new tblproperties; the format's and the changelog's
       refusals; the batch scoped to a bound tenant, its values checked where a narrower
       stored column must hold them exactly (exact_casts.py), identical rows collapsed
       where a sum would add them twice (redelivery.py); and the run's plan
       (commit/run_plan.py): its path, and where the batch checks run. When nothing
       before it writes, the first statement that writes checks the batch on its way in
       (checks.sql, mutable_checked_batch_sql): a batch-sourced MERGE (merge_batch.sql)
       or the rewrite formats' staged change set; every other run checks it below, in a
       query of its own --#}
  {%- set start = adapter.mutable_run_start(model, target_relation, existing_relation, compiled_code, tenant, flags.FULL_REFRESH, var('jammi_fail_at', none)) -%}
  {%- if start.full_refresh_ignored -%}
    {%- do exceptions.warn("mutable_table '" ~ model.name ~ "': --full-refresh ignored, the stored state is kept (a mutable table holds state its model cannot rebuild). Set config full_refresh: true on the model to allow rebuilding it from the model's output.") -%}
  {%- endif -%}
  {%- set fail_at = start.fail_at -%}
  {%- set run_id = start.run_id -%}
  {%- set rebuild = start.rebuild -%}
  {%- set state = start.state -%}
  {%- set adopting = start.adopting -%}
  {%- set definition = start.definition -%}
  {%- set file_format = start.file_format -%}
  {%- set new_properties = start.new_properties -%}
  {%- set batch_source = start.batch_source -%}
  {%- set redelivery = start.redelivery -%}
  {%- set collapsed = start.collapsed -%}
  {%- set plan = start.plan -%}
  {%- if plan.checks == 'separate' -%}
    {%- set checked = apply_mutable_batch_checks(definition, batch_source, tenant, redelivery) -%}
    {%- set batch_source = checked.batch_source -%}
    {%- set collapsed = checked.collapsed if checked.collapsed is not none else collapsed -%}
  {%- endif -%}
  {#-- changelog: its topic (registered on the first run) before anything else is written --#}
  {%- set definition = adapter.mutable_changelog_prepare(definition, target_relation, none if rebuild else state, file_format, start.changelog) -%}

  {#-- a permitted rebuild starts from nothing; a schema change widens the table first,
       new tblproperties are set first (the run writes under them) --#}
  {%- if rebuild -%}
    {%- do adapter.mutable_drop_table(existing_relation, state) -%}
    {%- set state = none -%}
  {%- endif -%}
  {%- if adopting -%}
    {%- do adapter.mutable_adopt(target_relation, state, definition, config.get('registry_schema'), invocation_id, model.name) -%}
  {%- endif -%}
  {%- if new_properties -%}
    {%- do run_query(get_set_tblproperties_sql(target_relation, new_properties)) -%}
  {%- endif -%}
  {%- do adapter.mutable_evolve_schema(model.name, start.evolution) -%}
  {%- if start.new_columns -%}
    {%- do run_query(get_add_columns_sql(target_relation, start.new_columns)) -%}
  {%- endif -%}
  {#-- 3-4. plan (one change set) and apply it; a run whose commit loses to a concurrent
       run (parquet/orc: the version claim; delta: a conflict exception) re-plans against
       the winner's version, a bounded number of times --#}
  {%- if replaced_view is not none -%}
    {%- do log("mutable_table '" ~ model.name ~ "': replacing the view " ~ replaced_view ~ " (a view holds no rows) with the mutable table", info=true) -%}
    {%- do adapter.drop_relation(replaced_view) -%}
  {%- endif -%}
  {%- set applied = apply_mutable_batch_replanning(plan, definition, batch_source, target_relation, state, file_format, tenant, run_id, fail_at) -%}
  {%- if applied.outcome.rejected -%}
    {#-- the statement that checks the batch on its way in found duplicate keys (nothing
         was written): if they are identical rows, the collapsed batch applies --#}
    {%- if batch_source == redelivery.collapsed_source -%}
      {%- do raise_mutable_batch_error(definition, batch_source, tenant, applied.outcome.rejected) -%}
    {%- endif -%}
    {%- set checked = apply_mutable_collapsed_batch_checks(definition, batch_source, tenant, redelivery) -%}
    {%- set batch_source = checked.batch_source -%}
    {%- set collapsed = checked.collapsed -%}
    {%- set applied = apply_mutable_batch_replanning(plan, definition, batch_source, target_relation, applied.state, file_format, tenant, run_id, fail_at) -%}
    {%- if applied.outcome.rejected -%}
      {%- do raise_mutable_batch_error(definition, batch_source, tenant, applied.outcome.rejected) -%}
    {%- endif -%}
  {%- endif -%}
  {#-- 5. finish (run_service.py): the definition recorded on an existing table (and in
       the registry when it changed), old versions swept, the run's relations dropped,
       Iceberg's snapshots beyond versions_kept expired (expire_snapshots), and the run's
       adapter_response with the table's version after it; then grants, docs, hooks --#}
  {%- do store_result('main', response=adapter.mutable_run_finish(definition, applied.state, target_relation, file_format, applied.outcome, collapsed, config.get('registry_schema'), invocation_id, start.truncates)) -%}
  {%- do apply_grants(target_relation, config.get('grants'), should_revoke(existing_relation, full_refresh_mode=rebuild)) -%}
  {%- do persist_docs(target_relation, model) -%}
  {%- do adapter.tenant_guard_trust(false) -%}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}


{#-- Plan and apply until committed: a run whose commit loses to a concurrent run
     (parquet/orc: the version claim; delta: a conflict exception) re-plans against the
     winner's version, up to plan.attempts times (a first run has one attempt;
     commit/run_plan.py). `fail_at` applies to the first attempt only. Returns {outcome,
     state}: plan_and_apply_mutable_batch's outcome and the state the last plan read. --#}
{% macro apply_mutable_batch_replanning(plan, definition, batch_source, target_relation, state, file_format, tenant, run_id, fail_at=none) -%}
  {%- set ns = namespace(outcome=adapter.mutable_outcome(false), state=state) -%}
  {%- set attempts = plan.attempts -%}
  {%- for attempt in range(attempts) -%}
    {%- if not ns.outcome.committed and not ns.outcome.rejected -%}
      {%- if attempt > 0 -%}
        {%- do log("mutable_table '" ~ definition.table_id ~ "': re-planning after a concurrent commit (attempt " ~ (attempt + 1) ~ " of " ~ attempts ~ ")", info=true) -%}
        {%- set ns.state = fetch_mutable_table_state(target_relation, adopt=ns.state.get('adoption')) -%}
      {%- endif -%}
      {%- set ns.outcome = plan_and_apply_mutable_batch(plan, definition, batch_source, target_relation, ns.state, file_format, tenant, run_id, fail_at if attempt == 0 else none, attempt == attempts - 1, attempt == 0) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'outcome': ns.outcome, 'state': ns.state}) }}
{%- endmacro %}


{#-- Plan the batch against `state` (none: first run) and apply it (`first_attempt`: no
     re-plan yet). Returns whether it committed (false only when a rewrite or merge
     commit lost to a concurrent run and `last_attempt` is false: the caller re-plans),
     the counts, the run's relations and the committed version directory (rewrite
     formats). --#}
{% macro plan_and_apply_mutable_batch(plan, definition, batch_source, target_relation, state, file_format, tenant, run_id, fail_at, last_attempt, first_attempt=true) -%}
  {#-- the changelog repaired; the attempt's definition: its clock, its tombstone and
       identity values (run_service.py) --#}
  {%- set definition = adapter.mutable_plan_prepare(definition, target_relation, state, file_format) -%}
  {%- set plan_target = target_relation if state is not none else none -%}
  {%- set use_merge = plan.uses_merge -%}
  {#-- deletes stay deleted: the tombstones this plan leaves (tombstones.sql) --#}
  {%- set tombstones = plan_mutable_tombstones(definition, batch_source, target_relation, state, file_format, tenant) -%}
  {%- if plan.path == 'merge_batch' -%}
    {{ return(apply_merge_batch(plan, definition, batch_source, target_relation, tenant, fail_at, last_attempt, file_format)) }}
  {%- endif -%}
  {%- set change_set_sql = get_change_set_sql(definition, batch_source, plan_target, tenant, not use_merge) -%}
  {#-- MERGE: the plan stays a view, evaluated inside the MERGE's own transaction;
       rewrite: the plan materialized once (a snapshot of the version in state.location;
       Spark's cache cannot hold planner queries with CTEs, a staging table can), the
       leftovers of runs that are gone dropped after it. Delta's MERGE reports what it
       changed: its change set is then evaluated once, inside the MERGE (a MERGE with
       nothing to change commits nothing); else the set is counted here --#}
  {%- set change_set_relation = mutable_temp_relation(target_relation, 'change_set') if use_merge else mutable_staging_relation(target_relation, run_id) -%}
  {%- set counts_from_merge = plan.counts_from_merge -%}
  {%- set staged = adapter.mutable_stage_change_set(change_set_relation, change_set_sql, not first_attempt, not counts_from_merge, none if use_merge else {'target': target_relation, 'location': state.location if state else none, 'run_id': run_id}) -%}
  {%- if staged.rejected -%}
    {#-- a batch check stopped the staging (definition.checks_in_plan): no table; with
         duplicate keys the caller tries the batch with identical rows collapsed, else
         the error names the check, with samples --#}
    {%- if staged.rejected in plan.collapse_on -%}
      {{ return(adapter.mutable_outcome(false, rejected=staged.rejected)) }}
    {%- endif -%}
    {%- do raise_mutable_batch_error(definition, batch_source, tenant, staged.rejected) -%}
  {%- endif -%}
  {%- set run_relations = [change_set_relation] -%}
  {%- set cleanup = get_drop_run_relations_sql(run_relations) -%}
  {%- set counts = staged.counts -%}
  {%- if counts and counts.total > 0 -%}
    {%- do apply_unique_index_checks(definition, plan_target, change_set_relation, run_relations) -%}
  {%- endif -%}
  {#-- the commit phase, one call (adapter.mutable_commit, apply_service.py): the create
       (the CREATE TABLE is the claim on the name: if another run created the table
       first, this run fails clearly and undoes only what it did itself), a MERGE, or
       the rewrite formats' next version swapped in by compare-and-swap
       (commit/version_commit.py); on failure this run's own relations and version
       directory go, and the table keeps the version it had --#}
  {%- set attempt = {'fail_at': fail_at, 'last_attempt': last_attempt, 'change_set': change_set_relation, 'counts': counts, 'run_id': run_id, 'cleanup': cleanup, 'invocation_id': invocation_id} -%}
  {%- set committed = adapter.mutable_outcome(true, counts) -%}
  {%- if state is none -%}
    {%- set committed = adapter.mutable_commit('create', definition, target_relation, file_format, get_next_state_sql(definition, none, change_set_relation), attempt, registry_schema=config.get('registry_schema')) -%}
  {%- elif use_merge and (counts_from_merge or counts.total > 0 or tombstones.new > 0) -%}
    {%- set committed = adapter.mutable_commit('merge', definition, target_relation, file_format, get_merge_change_set_sql(definition, target_relation, change_set_relation), attempt, tombstone_insert=tombstones.get('branch_insert')) -%}
  {%- elif counts.total > 0 or tombstones.new > 0 -%}
    {%- set committed = adapter.mutable_commit('rewrite', definition, target_relation, file_format, get_next_state_sql(definition, target_relation, change_set_relation), attempt, planned_location=state.location, tombstones_sql=tombstones.sql) -%}
  {%- endif -%}
  {%- set outcome = committed.with_run_relations(run_relations) -%}
  {%- if outcome.committed and (use_merge or outcome.location) -%}
    {%- do publish_mutable_changelog(definition, target_relation, outcome, fail_at) -%}
  {%- endif -%}
  {{ return(outcome) }}
{%- endmacro %}


{#-- After a commit: the committed version to the table's changelog (changelog: true;
     adapter.changelog_publish, with the test hook that stops the run before it). --#}
{% macro publish_mutable_changelog(definition, target_relation, outcome, fail_at) -%}
  {%- do adapter.changelog_publish(definition, target_relation, outcome.location, fail_at, get_drop_run_relations_sql(outcome.run_relations)) -%}
{%- endmacro %}


{#-- Drop what a run creates besides the table: temp views and the staging table. --#}
{% macro get_drop_run_relations_sql(relations) -%}
  {%- set statements = [] -%}
  {%- for relation in relations -%}
    {%- do statements.append(('drop table if exists ' if relation.type == 'table' else 'drop view if exists ') ~ relation) -%}
  {%- endfor -%}
  {{ return(statements) }}
{%- endmacro %}


{% macro drop_mutable_run_relations(relations) -%}
  {%- for sql in get_drop_run_relations_sql(relations) -%}
    {%- do run_query(sql) -%}
  {%- endfor -%}
{%- endmacro %}
