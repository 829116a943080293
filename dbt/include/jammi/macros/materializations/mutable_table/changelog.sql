{#-- changelog: true -- every committed version of the table is one publish of the topic
     `<model's topic-style name>.changes` (mutable_table/rules/changelog.py says why it is exactly once;
     docs/changelog_topics.md). The phases call:
       check_changelog_definition   before the batch view (read-only: what refuses a run)
       apply_changelog_preparation  before the plan (registration, first version)
       apply_changelog_repair       before every plan (what a crash left unpublished)
       get_stage_changelog_sql      parquet/orc, before the commit
       apply_changelog_publish      after the commit --#}


{#-- Everything that refuses a changelog run, read before anything is written (the
     batch view included): the format, a topic name another model has taken, a changed
     set of columns, and a table created anew while its changelog holds the events of an
     earlier table of its name (its versions would restart at 1 and collide with their
     offsets). Returns the table's registered changelog topic, or none. --#}
{% macro check_changelog_definition(definition, target_relation, state, file_format) -%}
  {%- if not definition.get('changelog') -%}{{ return(none) }}{%- endif -%}
  {%- if file_format not in ('delta', 'parquet', 'orc') -%}
    {%- do exceptions.raise_compiler_error("mutable_table '" ~ definition.table_id ~ "': changelog: true needs file_format delta, parquet or orc (" ~ file_format ~ " keeps no change history dbt-jammi can read). Nothing was written.\n  Fix: use one of those formats, or turn changelog off") -%}
  {%- endif -%}
  {%- set topic = fetch_topic_registration(target_relation) -%}
  {%- if topic is none -%}
    {%- set registry = topic_registry_relation(target_relation) -%}
    {%- set name = adapter.changelog_topic_name(definition.table_id) -%}
    {%- set owner = fetch_topic_name_owner(registry, name) if topic_table_exists(registry) else none -%}
    {%- if owner is not none -%}
      {%- do exceptions.raise_compiler_error("mutable_table '" ~ definition.table_id ~ "': its changelog topic name '" ~ name ~ "' is already used by model '" ~ owner ~ "' in schema " ~ target_relation.schema ~ ". Nothing was written.\n  Fix: give that topic model another topic_name, or this model another name") -%}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- do changelog_check_columns(definition, topic) -%}
  {%- if state is none -%}
    {%- set backing = topic_backing_relation(target_relation, topic) -%}
    {%- set held = run_query('select count(*) from ' ~ backing).rows[0][0] | int -%}
    {%- if held > 0 -%}
      {%- do exceptions.raise_compiler_error("mutable_table '" ~ definition.table_id ~ "': the table is created anew, but its changelog topic " ~ topic.name ~ " (" ~ backing ~ ") holds " ~ held ~ " event(s) of an earlier table of that name; new versions would collide with their offsets. Nothing was written.\n  Fix: drop " ~ backing ~ " and delete its row from " ~ topic_registry_relation(target_relation) ~ " (name = '" ~ topic.name ~ "'), or give the model a new name") -%}
    {%- endif -%}
  {%- endif -%}
  {{ return(topic) }}
{%- endmacro %}


{% macro changelog_check_columns(definition, topic) -%}
  {%- set columns = adapter.topic_definition(definition.table_id, adapter.changelog_event_columns(definition), {'topic_name': topic.name}).columns -%}
  {%- if tojson(topic.columns) != tojson(columns) -%}
    {%- do exceptions.raise_compiler_error("mutable_table '" ~ definition.table_id ~ "': its changelog topic " ~ topic.name ~ " was published with the columns " ~ tojson(topic.columns) ~ "; the table's changes now have " ~ tojson(columns) ~ ". Nothing was written.\n  Fix: a changelog's columns are fixed once published: keep the table's columns, or turn changelog off before changing them") -%}
  {%- endif -%}
{%- endmacro %}


{#-- Whether apply_changelog_preparation would write (register the topic, start or stop
     the changelog on the table's properties) for an existing table's `state`. --#}
{% macro changelog_preparation_writes(definition, state, topic) -%}
  {%- set since = state.properties.get('jammi.changelog_since') -%}
  {%- if definition.get('changelog') -%}
    {{ return(topic is none or since is none) }}
  {%- endif -%}
  {{ return(since is not none) }}
{%- endmacro %}


{#-- Register the changelog topic unless `topic` (check_changelog_definition's) is
     given, and record the first version it publishes. Sets the run-only
     definition.changelog_topic: {backing, location, file_format, since}. A table whose
     changelog was turned off forgets its first version, so turning it on again starts
     afresh. --#}
{% macro apply_changelog_preparation(definition, target_relation, state, file_format, topic=none) -%}
  {%- set since_property = 'jammi.changelog_since' -%}
  {%- if not definition.get('changelog') -%}
    {%- if state is not none and state.properties.get(since_property) is not none -%}
      {%- do run_query("alter table " ~ target_relation ~ " unset tblproperties if exists ('" ~ since_property ~ "')") -%}
    {%- endif -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set topic = topic or apply_changelog_topic_registration(definition, target_relation, file_format) -%}
  {%- set backing = topic_backing_relation(target_relation, topic) -%}
  {%- set since = none if state is none else adapter.changelog_first_version(state.properties) -%}
  {%- if state is not none and since is none -%}
    {#-- turned on for an existing table: the next committed version is the first --#}
    {%- if adapter.uses_merge(file_format) -%}
      {%- set since = fetch_delta_table_version(target_relation) + 1 -%}
      {%- do run_query("alter table " ~ target_relation ~ " set tblproperties ('delta.enableChangeDataFeed' = 'true', '" ~ since_property ~ "' = '" ~ since ~ "')") -%}
    {%- else -%}
      {%- set since = adapter.mutable_version(state.location) + 1 -%}
      {%- do run_query("alter table " ~ target_relation ~ " set tblproperties ('" ~ since_property ~ "' = '" ~ since ~ "')") -%}
    {%- endif -%}
    {%- do state.properties.update({since_property: since | string}) -%}
  {%- endif -%}
  {%- do definition.update({'changelog_topic': {
      'backing': backing | string,
      'location': none if topic.file_format == 'delta' else adapter.topic_table_location(backing),
      'file_format': topic.file_format,
      'since': since if since is not none else adapter.changelog_first_version_of_new_table(file_format)}}) -%}
{%- endmacro %}


{#-- The changelog topic of a table, registered on its first changelog run with the
     table as its relation (so topic_events(ref('the_table')) finds it); a concurrent
     run may have registered it since check_changelog_definition looked. --#}
{% macro apply_changelog_topic_registration(definition, target_relation, file_format) -%}
  {%- set columns = adapter.changelog_event_columns(definition) -%}
  {%- set name = adapter.changelog_topic_name(definition.table_id) -%}
  {%- set topic_definition = adapter.topic_definition(definition.table_id, columns, {'topic_name': name}) -%}
  {%- set registry = topic_registry_relation(target_relation) -%}
  {% do adapter.topic_create_if_absent(get_create_topic_registry_sql(registry)) %}
  {%- set topic = adapter.topic_registry_row(registry, 'relation_name', target_relation.identifier) -%}
  {%- if topic is none -%}
    {%- set topic = apply_topic_first_registration(target_relation, registry, topic_definition, 'delta' if file_format == 'delta' else 'parquet') -%}
  {%- endif -%}
  {#-- checked before the batch view; again here for a topic a concurrent run registered --#}
  {%- do changelog_check_columns(definition, topic) -%}
  {{ return(topic) }}
{%- endmacro %}


{#-- Quoted: Delta's grammar takes `history` (a fine model name) as a keyword. --#}
{% macro delta_quoted_name(relation) -%}
  `{{ relation.schema }}`.`{{ relation.identifier }}`
{%- endmacro %}


{% macro fetch_delta_table_version(relation) -%}
  {%- set rows = run_query('describe history ' ~ delta_quoted_name(relation) ~ ' limit 1') -%}
  {{ return(rows.rows[0][0] | int) }}
{%- endmacro %}


{#-- Before a plan from `state`: publish what is committed and not published yet (a run
     that crashed between its commit and its publish). --#}
{% macro apply_changelog_repair(definition, target_relation, state) -%}
  {%- set topic = definition.get('changelog_topic') -%}
  {%- if topic is none or state is none -%}{{ return(none) }}{%- endif -%}
  {%- if adapter.uses_merge(state.file_format) -%}
    {%- do apply_changelog_publish(definition, target_relation, none) -%}
  {%- else -%}
    {%- set version = adapter.mutable_version(state.location) -%}
    {%- if version is not none and version >= topic.since -%}
      {%- set published = adapter.topic_offsets_from_partitions(run_query('show partitions ' ~ topic.backing)) -%}
      {%- if version not in published -%}
        {%- do apply_changelog_publish(definition, target_relation, state.location) -%}
        {%- do log("mutable_table '" ~ definition.table_id ~ "': published version " ~ version ~ " to its changelog (its run stopped after the commit)", info=true) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}


{#-- After a commit. parquet/orc: attach the events staged for `location` (the committed
     version directory) as offset = version. delta: append the change data feed of every
     committed version above the topic's high-water mark. --#}
{% macro apply_changelog_publish(definition, target_relation, location) -%}
  {%- set topic = definition.changelog_topic -%}
  {%- if topic.file_format != 'delta' -%}
    {%- set version = adapter.mutable_version(location) -%}
    {%- do adapter.changelog_attach_version(topic.backing, version, adapter.changelog_staged_dir(topic.location, location)) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set published = run_query('select coalesce(max(_offset), 0) from ' ~ topic.backing).rows[0][0] | int -%}
  {%- set start = [published, topic.since] | max -%}
  {%- set current = fetch_delta_table_version(target_relation) -%}
  {%- if start <= current -%}
    {%- set raw_sql -%}
      select _change_type, _commit_version,
        {%- for c in definition.storage_columns %} {{ adapter.quote_column(c[0]) }},{% endfor %} tenant_id
      from table_changes({{ adapter.sql_string(delta_quoted_name(target_relation)) }}, {{ start }}, {{ current }})
    {%- endset -%}
    {%- do adapter.changelog_publish_delta(get_publish_changelog_delta_sql(definition, topic.backing, raw_sql), definition.table_id) -%}
  {%- endif -%}
{%- endmacro %}


{#-- Delta: one append of every version's events above the topic's high-water mark,
     read inside the same transaction (a concurrent publish of them conflicts). Offset =
     Delta version + 1: Delta versions start at 0, offsets at 1. --#}
{% macro get_publish_changelog_delta_sql(definition, backing, raw_sql) -%}
  insert into {{ backing }}
  select
    cast(table_version + 1 as bigint) as _offset,
    cast(row_number() over (partition by table_version order by {{ changelog_key_order(definition) }}) - 1 as bigint) as _row_idx,
    cast(unix_micros(current_timestamp()) as bigint) as _produced_at,
    {%- for c in adapter.changelog_event_columns(definition) %}
    {{ adapter.quote_column(c[0]) }},
    {%- endfor %}
    tenant_id
  from ({{ get_changelog_events_sql(definition, raw_sql) }}) as events
  where table_version + 1 > (select coalesce(max(_offset), 0) from {{ backing }})
{%- endmacro %}


{#-- parquet/orc, before the commit: the events of `change_set_relation` (planned
     against `target_relation`, none on the first run) as the staged directory of the
     version at `location`. The previous values of updated and deleted rows come from the
     change set (changelog.previous_in_plan) or else from the stored table. --#}
{% macro get_stage_changelog_sql(definition, target_relation, change_set_relation, location) -%}
  {%- set topic = definition.changelog_topic -%}
  {%- set q = adapter.quote_column -%}
  {%- set version = adapter.mutable_version(location) -%}
  {%- set raw_sql -%}
    select case _change when 'insert' then 'insert' else 'update_postimage' end as _change_type,
      {{ version }} as _commit_version,
      {%- for c in definition.storage_columns %} {{ q(c[0]) }},{% endfor %} tenant_id
    from {{ change_set_relation }} where _change in ('insert', 'update')
    {%- if target_relation is not none %}
    union all
    select case c._change when 'update' then 'update_preimage' else 'delete' end as _change_type,
      {{ version }} as _commit_version,
      {%- for col in definition.storage_columns %} t.{{ q(col[0]) }},{% endfor %} t.tenant_id
    from {{ target_relation }} as t
    join (
      select _change, tenant_id{% for k in definition.storage_key %}, {{ q(k) }}{% endfor %}
      from {{ change_set_relation }} where _change in ('update', 'delete')
    ) as c
    on {{ mutable_key_match_clause(definition, 't', 'c') }}
    {%- endif %}
  {%- endset -%}
  insert overwrite directory {{ adapter.sql_string(adapter.changelog_staged_dir(topic.location, location)) }} using parquet
  select
    cast(row_number() over (order by {{ changelog_key_order(definition) }}) - 1 as bigint) as _row_idx,
    cast(unix_micros(current_timestamp()) as bigint) as _produced_at,
    {%- for c in adapter.changelog_event_columns(definition) %}
    {{ q(c[0]) }},
    {%- endfor %}
    tenant_id
  {%- if adapter.changelog_previous_in_plan(definition) %}
  from ({{ get_changelog_events_from_plan_sql(definition, change_set_relation, version) }}) as events
  {%- else %}
  from ({{ get_changelog_events_sql(definition, raw_sql) }}) as events
  {%- endif %}
{%- endmacro %}


{#-- The events of a change set that carries each changed row's stored values
     (`_jammi_prev_<n>`, adapter.changelog_previous_in_plan): one change-set row is one
     event, its new values from the row, its previous ones from the stored values, so
     nothing is paired (no shuffle). The same events as get_changelog_events_sql. --#}
{% macro get_changelog_events_from_plan_sql(definition, change_set_relation, version) -%}
  {%- set q = adapter.quote_column -%}
  {%- set position = {} -%}
  {%- for c in definition.storage_columns %}{% do position.update({c[0]: loop.index0}) %}{% endfor -%}
  select
    case _change when 'update' then 'update' when 'delete' then 'delete' else 'insert' end as change_kind,
    cast({{ version }} as bigint) as table_version,
    {%- for c in adapter.changelog_event_sources(definition) %}
    {%- if c.source == 'key' %}
    cast({{ q(c.column) }} as {{ c.type }}) as {{ q(c.name) }},
    {%- elif c.source == 'after' %}
    cast(case when _change <> 'delete' then {{ q(c.column) }} end as {{ c.type }}) as {{ q(c.name) }},
    {%- else %}
    cast(case when _change <> 'insert' then _jammi_prev_{{ position[c.column] }} end as {{ c.type }}) as {{ q(c.name) }},
    {%- endif %}
    {%- endfor %}
    tenant_id
  from {{ change_set_relation }}
  where _change in ('insert', 'update', 'delete')
{%- endmacro %}


{% macro changelog_key_order(definition) -%}
  tenant_id{% for k in definition.storage_key %}, {{ adapter.quote_column(k) }}{% endfor %}
{%- endmacro %}


{#-- Change rows in the change data feed's vocabulary (_change_type: insert,
     update_preimage, update_postimage, delete; _commit_version; the storage columns;
     tenant_id) paired per key and version into one event: the new values, the previous
     values, and the kind (scd2: an inserted interval opens, an updated one closes). --#}
{% macro get_changelog_events_sql(definition, raw_sql) -%}
  {%- set q = adapter.quote_column -%}
  {%- set key = definition.storage_key -%}
  {%- set scd2 = definition.history == 'scd2' -%}
  {%- set image -%}
    named_struct('_present', true{% for c in adapter.changelog_value_columns(definition) %}, '{{ c }}', {{ q(c) }}{% endfor %})
  {%- endset -%}
  select
    case
      when before is null then '{{ 'open' if scd2 else 'insert' }}'
      when after is null then 'delete'
      else '{{ 'close' if scd2 else 'update' }}'
    end as change_kind,
    cast(_commit_version as bigint) as table_version,
    {%- for c in adapter.changelog_event_sources(definition) %}
    cast({{ (c.source ~ '.') if c.source != 'key' }}{{ q(c.column) }} as {{ c.type }}) as {{ q(c.name) }},
    {%- endfor %}
    tenant_id
  from (
    select _commit_version, tenant_id{% for k in key %}, {{ q(k) }}{% endfor %},
      first(if(_change_type in ('insert', 'update_postimage'), {{ image }}, null), true) as after,
      first(if(_change_type in ('update_preimage', 'delete'), {{ image }}, null), true) as before
    from ({{ raw_sql }}) as raw_changes
    group by _commit_version, tenant_id{% for k in key %}, {{ q(k) }}{% endfor %}
  ) as paired
{%- endmacro %}
