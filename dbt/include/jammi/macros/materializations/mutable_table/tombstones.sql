{#-- Deletes stay deleted (docs/mutable_table.md#deletes-stay-deleted;
     mutable_table/rules/tombstones.py). Under a version rule with delete_when, a delete
     whose version is newer than what the table holds for its key leaves a tombstone
     (tenant_id, the primary key, the version columns, _deleted_ms); a batch row of that
     key whose version is not newer than the tombstone changes nothing (its `_tombstoned`
     flag, read by the planner and the batch-sourced MERGE). Tombstones are kept
     tombstone_retention and are never rows of the table.

     Where they live and how they commit with their delete:
       - parquet/orc: <version directory>/_jammi_tombstones, the complete live set of that
         version, written with the version before the commit; the version's
         ALTER TABLE ... SET LOCATION commits both. Spark's readers skip `_` paths.
       - Delta: <table>__jammi_tombstones, appended before the MERGE with the run's
         invocation id; a row counts only when the table's Delta history holds a commit
         of that invocation (commitInfo.userMetadata), so a run killed before its MERGE
         commits leaves rows nobody takes.
       - Iceberg: <table>__jammi_tombstones, appended after the run's MERGE into its own
         branch, tagged with the branch's snapshot; the fast-forward of the table to that
         snapshot commits both (commit/branch_commit.py). --#}


{#-- 'a', 'b': values as escaped string literals. --#}
{% macro mutable_sql_string_list(values) -%}
  {%- for v in values %}{{ adapter.sql_string(v | string) }}{{ ', ' if not loop.last }}{% endfor -%}
{%- endmacro %}


{% macro mutable_tombstone_select_list(definition, prefix='') -%}
  {%- for c in adapter.mutable_tombstone_columns(definition) %}{{ prefix }}{{ adapter.quote_column(c[0]) }}{{ ', ' if not loop.last }}{% endfor -%}
{%- endmacro %}


{#-- No tombstones, typed. --#}
{% macro mutable_no_tombstones_sql(definition) -%}
  select {% for c in adapter.mutable_tombstone_columns(definition) %}cast(null as {{ c[1] }}) as {{ adapter.quote_column(c[0]) }}{{ ', ' if not loop.last }}{% endfor %} where 1 = 0
{%- endmacro %}


{#-- The Delta tombstone table of `target_relation`. --#}
{% macro mutable_tombstone_relation(target_relation) -%}
  {{ return(target_relation.incorporate(path={'identifier': adapter.mutable_tombstone_table_identifier(target_relation.identifier)})) }}
{%- endmacro %}


{#-- Before a plan: where the key's live tombstones are read from. Sets the run-only
     definition keys `tombstones_from` (a query of the live tombstones, or none) and
     `tombstone_now_ms` (when this plan's deletes happen). No-op without tombstones. --#}
{% macro prepare_mutable_tombstones(definition, target_relation, state, file_format) -%}
  {%- do definition.update({'tombstones_from': none, 'tombstone_now_ms': adapter.mutable_now_ms()}) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is none or state is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- do definition.update({'now_ms': definition.tombstone_now_ms}) -%}
  {%- set live = adapter.quote_column(adapter.mutable_tombstone_names().deleted_ms) ~ ' >= ' ~ adapter.mutable_tombstone_cutoff(definition) -%}
  {%- if adapter.uses_merge(file_format) -%}
    {%- set tombstones = load_relation(mutable_tombstone_relation(target_relation)) -%}
    {%- set committed = adapter.mutable_committed_tombstone_tags(target_relation, file_format) if tombstones is not none else '' -%}
    {%- if committed -%}
      {%- do definition.update({'tombstones_from': 'select ' ~ mutable_tombstone_select_list(definition) ~ ' from ' ~ tombstones ~ ' where ' ~ live ~ ' and ' ~ adapter.mutable_tombstone_names().invocation ~ ' in (' ~ committed ~ ')'}) -%}
    {%- endif -%}
  {%- elif adapter.mutable_tombstones_readable(file_format, state.location) -%}
    {%- do definition.update({'tombstones_from': 'select ' ~ mutable_tombstone_select_list(definition) ~ ' from ' ~ adapter.mutable_path_relation(file_format, adapter.mutable_version_tombstone_dir(state.location)) ~ ' where ' ~ live}) -%}
  {%- endif -%}
{%- endmacro %}


{#-- The stamped batch with `_tombstoned`: true when the row's version is not newer than
     its key's live tombstone (the row changes nothing). Unchanged without tombstones. --#}
{% macro mutable_tombstoned_batch_sql(definition, stamped_sql) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is none -%}
    {{ stamped_sql }}
  {%- elif not definition.get('tombstones_from') -%}
    select stamped.*, false as _tombstoned from ({{ stamped_sql }}) as stamped
  {%- else -%}
    select stamped.*, coalesce({{ mutable_version_expr(definition, 'stamped.') }} <= tomb._tomb_version, false) as _tombstoned
    from ({{ stamped_sql }}) as stamped
    left join (
      select tenant_id{% for k in definition.storage_key %}, {{ adapter.quote_column(k) }}{% endfor %}, max({{ mutable_version_expr(definition) }}) as _tomb_version
      from ({{ definition.tombstones_from }}) as live
      group by tenant_id{% for k in definition.storage_key %}, {{ adapter.quote_column(k) }}{% endfor %}
    ) as tomb on {{ mutable_key_match_clause(definition, 'stamped', 'tomb') }}
  {%- endif -%}
{%- endmacro %}


{#-- The planner's joined CTE: the batch row's flag (`s`: the batch side). --#}
{% macro mutable_tombstoned_column(definition, s) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is not none -%}
    coalesce({{ s }}._tombstoned, false) as tombstoned,
  {%- endif -%}
{%- endmacro %}


{#-- The planner's decision: a tombstoned batch row changes nothing. --#}
{% macro mutable_tombstone_decision(definition) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is not none -%}
      when in_batch and tombstoned then null
  {%- endif -%}
{%- endmacro %}


{#-- The batch-sourced MERGE's guard on every clause (`s`: its source). --#}
{% macro mutable_tombstone_guard(definition, s='s') -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is not none %} and not {{ s }}._tombstoned{% endif -%}
{%- endmacro %}


{#-- This plan's new tombstones: per key, the batch's winning row when it is a delete,
     not tombstoned already, and newer than the stored row (or the key is not stored). --#}
{% macro get_tombstone_candidates_sql(definition, batch_source, target_relation, tenant) -%}
  {%- set q = adapter.quote_column -%}
  select {% for c in adapter.mutable_tombstone_columns(definition) %}{{ 'cast(' ~ definition.tombstone_now_ms ~ ' as bigint) as ' ~ q(c[0]) if loop.last else 's.' ~ q(c[0]) }}{{ ', ' if not loop.last }}{% endfor %}
  from (
    select *, row_number() over (
      partition by tenant_id{% for k in definition.storage_key %}, {{ q(k) }}{% endfor %}
      order by {{ mutable_version_expr(definition) }} desc) as _tomb_rn
    from ({{ mutable_tombstoned_batch_sql(definition, mutable_stamped_batch_sql(definition, batch_source, tenant, '_is_delete')) }}) as tb
  ) as s
  left anti join ({{ mutable_target_rows_sql(definition, target_relation, tenant) }}) as t
    on {{ mutable_key_match_clause(definition, 's', 't') }} and not {{ mutable_version_newer(definition, 's.', 't.') }}
  where s._tomb_rn = 1 and s._is_delete and not s._tombstoned
{%- endmacro %}


{#-- The complete live tombstone set after this plan: the live ones no new tombstone
     replaces, and the new ones (parquet/orc write it into the next version). --#}
{% macro get_next_tombstones_sql(definition, candidates_sql) -%}
  {%- set columns = mutable_tombstone_select_list(definition, 'kept.') -%}
  {%- if definition.get('tombstones_from') %}
  select {{ columns }} from ({{ definition.tombstones_from }}) as kept
  left anti join ({{ candidates_sql }}) as c on {{ mutable_key_match_clause(definition, 'kept', 'c') }}
  union all
  {%- endif %}
  select {{ mutable_tombstone_select_list(definition) }} from ({{ candidates_sql }}) as fresh
{%- endmacro %}


{#-- Before applying a plan: the tombstones it leaves. Returns {'sql', 'new'}: parquet/orc
     the next version's complete set and how many are new (a version is written for
     them even when no row changes); Delta: none and the count is 0 -- its new
     tombstones are appended before the MERGE (apply_delta_tombstones); Iceberg: the
     count, and `branch_insert`, the statement that appends them with the run's branch
     snapshot (apply_merge commits it). No-op without tombstones or on a first run. --#}
{% macro plan_mutable_tombstones(definition, batch_source, target_relation, state, file_format, tenant) -%}
  {%- do prepare_mutable_tombstones(definition, target_relation, state, file_format) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is none or state is none -%}
    {{ return({'sql': none, 'new': 0}) }}
  {%- endif -%}
  {%- set candidates = get_tombstone_candidates_sql(definition, batch_source, target_relation, tenant) -%}
  {%- if file_format == 'delta' -%}
    {%- do apply_delta_tombstones(definition, target_relation, candidates) -%}
    {{ return({'sql': none, 'new': 0}) }}
  {%- endif -%}
  {%- set new = run_query('select count(*) from (' ~ candidates ~ ') as c').rows[0][0] | int -%}
  {%- if file_format == 'iceberg' -%}
    {{ return({'sql': none, 'new': new, 'branch_insert': prepare_iceberg_tombstones(definition, target_relation, candidates) if new > 0 else none}) }}
  {%- endif -%}
  {{ return({'sql': get_next_tombstones_sql(definition, candidates), 'new': new}) }}
{%- endmacro %}


{#-- The tombstone table beside a MERGE table (created once), its expired rows dropped
     (best effort: a later run retries). Returns the statement that appends this plan's
     tombstones tagged with `tag`. --#}
{% macro prepare_merge_tombstones(definition, target_relation, candidates_sql, file_format, tag) -%}
  {%- set relation = mutable_tombstone_relation(target_relation) -%}
  {%- set names = adapter.mutable_tombstone_names() -%}
  {%- do run_query('create table if not exists ' ~ relation ~ ' (' ~ (adapter.mutable_tombstone_columns(definition) | map('join', ' ') | join(', ')) ~ ', ' ~ names.invocation ~ ' string) using ' ~ file_format) -%}
  {%- do adapter.mutable_expire_delta_tombstones(relation, adapter.quote_column(names.deleted_ms) ~ ' < ' ~ adapter.mutable_tombstone_cutoff(definition)) -%}
  {{ return('insert into ' ~ relation ~ ' select ' ~ mutable_tombstone_select_list(definition) ~ ', ' ~ adapter.sql_string(tag) ~ ' from (' ~ candidates_sql ~ ') as c') }}
{%- endmacro %}


{#-- Delta: append this plan's tombstones with the invocation id before the MERGE (they
     count once the MERGE's commit, tagged with the same id, is in the table's history). --#}
{% macro apply_delta_tombstones(definition, target_relation, candidates_sql) -%}
  {%- do run_query(prepare_merge_tombstones(definition, target_relation, candidates_sql, 'delta', invocation_id)) -%}
{%- endmacro %}


{#-- Iceberg: the statement apply_merge runs after the MERGE into the run's branch, with
     the branch's snapshot in place of the head tag (commit/branch_commit.py). --#}
{% macro prepare_iceberg_tombstones(definition, target_relation, candidates_sql) -%}
  {{ return(prepare_merge_tombstones(definition, target_relation, candidates_sql, 'iceberg', adapter.mutable_tombstone_names().branch_head)) }}
{%- endmacro %}


{#-- A version directory's tombstones as written: its live set (`tombstones_sql`). --#}
{% macro get_write_tombstones_sql(location, file_format, tombstones_sql) -%}
  insert overwrite directory {{ adapter.sql_string(adapter.mutable_version_tombstone_dir(location)) }} using {{ file_format }}
  {{ tombstones_sql }}
{%- endmacro %}


{#-- Rollback: the kept version's tombstones become the current ones. parquet/orc: the
     complete set the rollback's version carries (none when that version has none);
     Delta: rows of invocations committed after the kept version stop counting. --#}
{% macro mutable_rollback_tombstones_sql(definition, file_format, kept_location) -%}
  {%- if adapter.mutable_tombstone_retention_ms(definition) is none -%}{{ return(none) }}{%- endif -%}
  {%- if adapter.mutable_tombstones_readable(file_format, kept_location) -%}
    {{ return('select ' ~ mutable_tombstone_select_list(definition) ~ ' from ' ~ adapter.mutable_path_relation(file_format, adapter.mutable_version_tombstone_dir(kept_location))) }}
  {%- endif -%}
  {{ return(mutable_no_tombstones_sql(definition)) }}
{%- endmacro %}


{#-- Delta and Iceberg: tombstones written by commits after the kept version stop
     counting (Delta tags them with the invocation, Iceberg with the snapshot). --#}
{% macro apply_merge_rollback_tombstones(definition, relation, history, to_version, file_format) -%}
  {%- set tombstones = load_relation(mutable_tombstone_relation(relation)) -%}
  {%- set later = adapter.mutable_tombstone_tags_after(history, to_version, file_format) -%}
  {%- if tombstones is not none and later -%}
    {%- do run_query('delete from ' ~ tombstones ~ ' where ' ~ adapter.mutable_tombstone_names().invocation ~ ' in (' ~ mutable_sql_string_list(later) ~ ')') -%}
  {%- endif -%}
{%- endmacro %}
