{#-- The MERGE applier's batch-sourced plan (Delta, history: none; the cases
     commit/run_plan.py's merge_batch path). The batch itself -- one row per key, checked
     in the same pass -- is the MERGE's source, and the planner's per-key decisions are the
     MERGE's own clauses: the tenant scope in its ON condition, the version rule and the
     no-op test in WHEN MATCHED AND ..., the hard deletes in WHEN NOT MATCHED BY SOURCE.
     Delta then joins the batch with the table once per pass and changes only rows with
     real changes (with deletion vectors on, only those rows are written).

     The same decisions as the change-set planner, from the same guards (key_decisions.py,
     docs/mutable_table.md):
       - a key's batch row with the highest version_column wins; with a version column a
         stored key changes only for a greater version;
       - delete_when deletes a stored key; an update that changes no value is left alone;
       - hard_deletes: delete deletes the stored keys of the run's scope absent from the
         batch; rows outside the scope never match and are never deleted.

     The batch checks (checks.sql) run inside the MERGE: a row with a NULL key or version,
     or a key that appears twice (at its highest version), raises an error marked
     'jammi-batch-check:<kind>' and the MERGE aborts before it commits, so nothing is
     written; the run then reads the checks' samples for its error message. --#}

{#-- `drop_unchanged` (hard_deletes: delete only): the source keeps only the rows that
     change something, and the stored keys to delete (get_merge_batch_changes_sql). The
     WHEN clauses are the key's actions (key_decisions.py, shared with the change set). --#}
{% macro get_merge_batch_sql(definition, target_relation, batch_source, tenant, drop_unchanged=false) -%}
{%- set rules = adapter.mutable_planner(definition) -%}
{%- set q = rules.quoted -%}
{%- set merge_functions = definition.get('merge_functions') or {} -%}
{%- set types = {} -%}
{%- for c in definition.storage_columns %}{% do types.update({c[0]: c[1]}) %}{% endfor -%}
{%- set new_value = {} -%}
{%- for c in definition.value_columns -%}
  {%- do new_value.update({c: rules.grouped_value(c, mutable_merged_value(merge_functions.get(c), 's.' ~ q[c], 't.' ~ q[c], rules.keeps_stored_on_null(c)), 's.', 't.', true, 's._jammi_restarted')}) -%}
{%- endfor -%}
{%- set same -%}
  {%- for c in definition.value_columns %}{{ mutable_same_value(new_value[c], 't.' ~ q[c], types[c]) }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endset -%}
{%- set terms = {
    'is_delete': 's._is_delete', 'tombstoned': 's._tombstoned', 'same': same,
    'newer': rules.grouped_newer(mutable_version_newer(definition, 's.', 't.') if definition.version_column else 'true', 's._is_delete', 's.', 't.', true)} -%}
{%- set absent = 'marked' if drop_unchanged else ('by_source' if definition.hard_deletes == 'delete' else none) -%}
merge into {{ target_relation }} as t
using (
  {%- if drop_unchanged %}
  {{ get_merge_batch_changes_sql(definition, target_relation, batch_source, tenant) }}
  {%- else %}
  {{ get_merge_batch_source_sql(definition, batch_source, tenant) }}
  {%- endif %}
) as s
on {{ mutable_merge_batch_key_match(definition, tenant) }}
{%- for clause in rules.decisions.merge_clauses(terms, absent, mutable_target_scope_clause(definition, tenant, 't')) %}
when {{ clause.when }} then
  {%- if clause.change == 'delete' %} delete
  {%- elif clause.change == 'update' %} update set
  {%- for c in definition.value_columns %}
  t.{{ q[c] }} = {{ new_value[c] }}{{ ',' if not loop.last }}
  {%- endfor %}
  {%- else %} insert (
  {%- for c in definition.storage_columns %}{{ q[c[0]] }}, {% endfor %}tenant_id)
values (
  {%- for c in definition.storage_columns %}s.{{ q[c[0]] }}, {% endfor %}s.tenant_id)
  {%- endif %}
{%- endfor %}
{%- endmacro %}


{#-- The batch as the MERGE reads it: the storage columns (cast; columns the batch lacks
     are NULL), tenant_id stamped, _is_delete; one row per key (its highest version), and
     every row checked on the way (see above). One window, one shuffle of the batch. --#}
{% macro get_merge_batch_source_sql(definition, batch_source, tenant) -%}
  {{ mutable_checked_batch_sql(definition, mutable_tombstoned_batch_sql(definition, mutable_stamped_batch_sql(definition, batch_source, tenant, '_is_delete')), tenant) }}
{%- endmacro %}


{#-- A snapshot feed's source (hard_deletes: delete: the batch is the scope's complete
     set, and a few rows changed): the checked batch without the rows that change
     nothing -- a stored key's row that is not newer, or that would update no value --
     plus, for each stored key of the run's scope the batch lacks, an `_absent` row the
     MERGE deletes (instead of WHEN NOT MATCHED BY SOURCE, which would delete the keys of
     the dropped rows too). Delta is then given only the changes, so only the files
     holding them are touched. The stored rows are read here, inside the MERGE's USING:
     the read belongs to the MERGE's own transaction, so a concurrent commit still
     refuses this one (no separate statement, no lost update). The batch is checked
     before the join; the MERGE's clauses keep their own tests. --#}
{% macro get_merge_batch_changes_sql(definition, target_relation, batch_source, tenant) -%}
{%- set rules = adapter.mutable_planner(definition) -%}
{%- set q = rules.quoted -%}
{%- set merge_functions = definition.get('merge_functions') or {} -%}
{%- set types = {} -%}
{%- for c in definition.storage_columns %}{% do types.update({c[0]: c[1]}) %}{% endfor -%}
{%- set same -%}
  {%- for c in definition.value_columns %}{{ mutable_same_value(rules.grouped_value(c, mutable_merged_value(merge_functions.get(c), 's.' ~ q[c], 'stored.' ~ q[c], rules.keeps_stored_on_null(c)), 's.', 'stored.', true, 'coalesce(s._jammi_restarted, false)'), 'stored.' ~ q[c], types[c]) }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endset -%}
select
  {%- for c in definition.storage_columns %}
  {% if c[0] in definition.storage_key %}case when s._rn is null then stored.{{ q[c[0]] }} else s.{{ q[c[0]] }} end{% else %}s.{{ q[c[0]] }}{% endif %} as {{ q[c[0]] }},
  {%- endfor %}
  case when s._rn is null then stored.tenant_id else s.tenant_id end as tenant_id,
  coalesce(s._is_delete, true) as _is_delete,
  {%- if rules.keeps_tombstones %}
  coalesce(s._tombstoned, false) as _tombstoned,
  {%- endif %}
  {%- if definition.version_groups %}
  coalesce(s._jammi_restarted, false) as _jammi_restarted,
  {%- endif %}
  s._rn is null as _absent
from (
  {{ get_merge_batch_source_sql(definition, batch_source, tenant) }}
) as s
full join (select * from {{ target_relation }} where {{ mutable_target_scope_clause(definition, tenant) }}) as stored
  on {{ mutable_merge_batch_key_match(definition, tenant, 'stored') }}
where {{ rules.decisions.changes_filter({
    'absent': 's._rn is null', 'not_stored': 'stored.' ~ q[definition.storage_key[0]] ~ ' is null',
    'is_delete': 's._is_delete', 'tombstoned': 's._tombstoned', 'same': same,
    'newer': rules.grouped_newer(mutable_version_newer(definition, 's.', 'stored.') if definition.version_column else 'true', 's._is_delete', 's.', 'stored.', true)}) }}
{%- endmacro %}


{#-- The MERGE's ON condition. Unless an unbound tenant_from run stamps each row with its
     own tenant, every batch row has the run's one tenant: the key alone matches, within
     the run's scope (no NULL-safe tenant comparison in the join, and the batch's window
     partitions by the key alone). --#}
{% macro mutable_merge_batch_key_match(definition, tenant, t='t') -%}
  {%- if definition.tenant_from and tenant is none -%}
    {{ mutable_key_match_clause(definition, t, 's') }}
  {%- else -%}
    {%- for k in definition.storage_key %}{{ t }}.{{ adapter.quote_column(k) }} = s.{{ adapter.quote_column(k) }} and {% endfor %}{{ mutable_target_scope_clause(definition, tenant, t) }}
  {%- endif -%}
{%- endmacro %}



{#-- Apply the batch to an existing Delta table (or an Iceberg table whose MERGE counts in
     its snapshot, commit/iceberg_merge.py) with one batch-sourced MERGE. Returns what
     plan_and_apply_mutable_batch returns. A batch check that stops the MERGE fails the
     run with the check's samples (nothing was written). --#}
{% macro apply_merge_batch(plan, definition, batch_source, target_relation, tenant, fail_at, last_attempt, file_format='delta') -%}
  {#-- hard_deletes: delete declares the batch the scope's complete set: a snapshot feed.
       Delta is given only its changes (get_merge_batch_changes_sql: Delta then touches
       only the files holding them); Iceberg the batch itself, with WHEN NOT MATCHED BY
       SOURCE: its MERGE joins once, and on merge-on-read writes only the changed rows
       (a changes source would join the whole table twice, docs/performance.md) --#}
  {%- set changes_only = definition.hard_deletes == 'delete' and file_format == 'delta' -%}
  {%- set merge_sql = get_merge_batch_sql(definition, target_relation, batch_source, tenant, changes_only) -%}
  {%- set merged = adapter.mutable_commit('merge', definition, target_relation, file_format, merge_sql, {'fail_at': fail_at, 'last_attempt': last_attempt}) -%}
  {%- if merged.rejected in plan.collapse_on -%}
    {#-- duplicate keys: the caller tries the batch with identical rows collapsed --#}
    {{ return(merged) }}
  {%- elif merged.rejected -%}
    {%- do raise_mutable_batch_error(definition, batch_source, tenant, merged.rejected) -%}
  {%- endif -%}
  {%- if merged.committed -%}
    {%- do publish_mutable_changelog(definition, target_relation, merged, fail_at) -%}
  {%- endif -%}
  {{ return(merged) }}
{%- endmacro %}
