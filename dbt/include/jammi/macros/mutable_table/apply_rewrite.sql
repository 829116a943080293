{#-- Rewrite applier (parquet, orc): the complete next version of the table is written to
     a fresh version directory <table base>/v<version>_<run id>, then committed with ONE
     metastore operation, ALTER TABLE ... SET LOCATION. Until that call the table points
     at the previous version's files, which are never modified; after it, at the new
     ones. Leftover directories of failed runs are removed by the next committing run,
     which also keeps only the newest `versions_kept` versions (mutable_table/versions/kept_versions.py). --#}

{#-- The table after applying the change set: stored rows the change set does not
     replace or delete, plus its inserts and updates. target_relation none = empty. --#}
{% macro get_next_state_sql(definition, target_relation, change_set_relation) -%}
  {%- set q = adapter.quote_column -%}
  {%- set columns -%}
    {%- for c in definition.storage_columns %}{{ q(c[0]) }}, {% endfor %}tenant_id
  {%- endset -%}
  {%- if target_relation is not none %}
  select {% for c in definition.storage_columns %}t.{{ q(c[0]) }}, {% endfor %}t.tenant_id
  from {{ target_relation }} as t
  left anti join (
    select tenant_id{% for k in definition.storage_key %}, {{ q(k) }}{% endfor %}
    from {{ change_set_relation }} where _change in ('update', 'delete')
  ) as c
  on {{ mutable_key_match_clause(definition, 't', 'c') }}
  union all
  {%- endif %}
  select {{ columns }} from {{ change_set_relation }} where _change in ('insert', 'update')
{%- endmacro %}


{#-- Data layout for files without indexes of their own: sort rows within each file by
     the ordering column and the index columns, so min/max statistics skip files and
     row groups for predicates on them. --#}
{% macro mutable_sort_clause(definition) -%}
  {%- set columns = [] -%}
  {%- if definition.ordering_column -%}{%- do columns.append(definition.ordering_column) -%}{%- endif -%}
  {%- for index in definition.indexes -%}
    {%- for c in index.columns if c not in columns -%}{%- do columns.append(c) -%}{%- endfor -%}
  {%- endfor -%}
  {%- if columns -%}
  sort by {% for c in columns %}{{ adapter.quote_column(c) }}{{ ', ' if not loop.last }}{% endfor %}
  {%- endif -%}
{%- endmacro %}


{#-- A statement that fails when the test hook var jammi_fail_at names `phase`. --#}
{% macro mutable_failure_sql(phase) -%}
  select raise_error('jammi_fail_at={{ phase }}: injected failure')
{%- endmacro %}


{% macro get_write_version_sql(definition, target_relation, change_set_relation, location, file_format, fail_at=none) -%}
  insert overwrite directory {{ adapter.sql_string(location) }} using {{ file_format }}
  select * from (
    {{ get_next_state_sql(definition, target_relation, change_set_relation) }}
  ) as next_state
  {%- if fail_at == 'write' %}
  where coalesce(cast(raise_error('jammi_fail_at=write: injected failure while writing') as boolean), true)
  {%- endif %}
  {{ mutable_sort_clause(definition) }}
{%- endmacro %}


{% macro get_commit_version_sql(target_relation, location) -%}
  alter table {{ target_relation }} set location {{ adapter.sql_string(location) }}
{%- endmacro %}


{#-- Apply a change set to an existing parquet/orc table. `planned_location` is the
     version the plan was made from (read before planning). The commit is a
     compare-and-swap (adapter.mutable_commit_version, mutable_table/commit/rewrite_commit.py): of two runs that
     planned from the same version, at most one commits; the other fails with a clear
     message. On any failure this run's version directory and `cleanup` (its own run
     relations) are removed; the table keeps pointing at the version it had. Returns the
     committed location, or none when the commit lost to a concurrent run and
     `last_attempt` is false (the caller re-plans; nothing was committed). --#}
{#-- `tombstones_sql`: the version's live tombstones (rules/tombstone_phases.py), written into it. --#}
{% macro apply_rewrite(definition, target_relation, change_set_relation, file_format, planned_location, run_id, fail_at=none, cleanup=[], last_attempt=true, counts=none, kind='run', tombstones_sql=none) -%}
  {%- set location = adapter.mutable_next_location(planned_location, run_id) -%}
  {#-- the version's log row first (mutable_table/versions/kept_versions.py): every version directory has one --#}
  {%- set staged_paths = [adapter.mutable_version_log_location(location)] -%}
  {%- set steps = [{'sql': adapter.mutable_version_log_sql(location, planned_location, counts, invocation_id, kind), 'undo_paths': staged_paths[:]},
                   {'sql': get_write_version_sql(definition, target_relation, change_set_relation, location, file_format, fail_at), 'undo_paths': [location]}] -%}
  {%- if tombstones_sql -%}
    {%- do steps.append({'sql': adapter.mutable_tombstones_write_sql(location, file_format, tombstones_sql), 'undo_paths': [location]}) -%}
  {%- endif -%}
  {#-- identity_column: the version's high-water mark, inside it (identity.sql) --#}
  {%- do steps.extend(adapter.mutable_identity_mark_steps(definition, target_relation, change_set_relation, location, planned_location)) -%}
  {%- if definition.get('changelog_topic') -%}
    {#-- the version's changelog events, staged where no reader sees them
         (rules/changelog_sql.py) --#}
    {%- set changelog_step = adapter.changelog_stage_step(definition, target_relation, change_set_relation, location) -%}
    {%- do staged_paths.extend(changelog_step.undo_paths) -%}
    {%- do steps.append(changelog_step) -%}
  {%- endif -%}
  {%- if fail_at == 'before_commit' -%}
    {%- do steps.append({'sql': mutable_failure_sql('before_commit')}) -%}
  {%- endif -%}
  {%- do adapter.mutable_execute_all_or_nothing(steps, cleanup) -%}
  {%- if fail_at == 'concurrent_commit' -%}
    {%- do simulate_concurrent_commit(target_relation, planned_location, file_format) -%}
  {%- endif -%}
  {%- set committed = adapter.mutable_commit_version(target_relation, planned_location, location, definition.table_id, cleanup, last_attempt, staged_paths) -%}
  {{ return(location if committed else none) }}
{%- endmacro %}


{#-- Test hook: what another run committing between our plan and our commit does. --#}
{% macro simulate_concurrent_commit(target_relation, planned_location, file_format) -%}
  {%- set other = adapter.mutable_next_location(planned_location, 'concurrent') -%}
  {%- do run_query('insert overwrite directory ' ~ adapter.sql_string(other) ~ ' using ' ~ file_format ~ ' select * from ' ~ target_relation) -%}
  {%- do run_query(get_commit_version_sql(target_relation, other)) -%}
{%- endmacro %}
