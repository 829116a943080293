{#-- Staging, retention and the publish commit. --#}

{#-- Where the batch is staged. parquet: a fresh directory under the backing table's
     `_staging/` folder (hidden from readers: partitions are read from the metastore and
     `_` folders are never listed); it becomes partition `_offset=N` when claimed.
     delta: a managed parquet table, dropped after the commit. Either way, what failed
     publishes left there more than a day ago is removed first (see topic/staging.py
     for why that is provably abandoned). --#}
{% macro topic_staging_target(backing, topic) -%}
  {%- set publish_id = adapter.topic_publish_id() -%}
  {%- if topic.file_format == 'delta' -%}
    {% do apply_topic_stage_cleanup(backing) %}
    {{ return({'kind': 'table', 'publish_id': publish_id,
               'target': backing.schema ~ '.' ~ backing.identifier ~ '__stage_' ~ publish_id}) }}
  {%- endif -%}
  {%- set location = fetch_topic_table_location(backing) -%}
  {%- set removed = adapter.topic_remove_stale_staging(backing, location) -%}
  {%- if removed -%}
    {{ log("topic " ~ topic.name ~ ": removed " ~ removed | length ~ " abandoned staged batch(es)") }}
  {%- endif -%}
  {{ return({'kind': 'directory', 'publish_id': publish_id,
             'target': location ~ '/_staging/' ~ publish_id}) }}
{%- endmacro %}


{#-- A topic table's location, fixed at its creation: kept for the invocation, read from
     dbt's listing when it has one (topic/metadata.py). --#}
{% macro fetch_topic_table_location(relation) -%}
  {{ return(adapter.topic_table_location(relation)) }}
{%- endmacro %}


{#-- Stage tables of delta publishes that failed more than a day ago (younger ones may
     belong to a concurrent publish still in flight; older ones can no longer be claimed). --#}
{% macro apply_topic_stage_cleanup(backing) -%}
  {%- set prefix = backing.identifier ~ '__stage_' -%}
  {%- set rows = run_query("show tables in " ~ backing.schema ~ " like " ~ adapter.sql_string(prefix ~ '*')) -%}
  {%- set names = [] -%}
  {%- for row in rows -%}{%- do names.append(row[1]) -%}{%- endfor -%}
  {%- for name in adapter.topic_stale_stage_tables(names, prefix) -%}
    {% do run_query("drop table if exists " ~ backing.schema ~ "." ~ name) %}
  {%- endfor -%}
{%- endmacro %}


{#-- The batch with its engine columns: _row_idx is the 0-based position in the model's
     output, _produced_at one UTC-microseconds timestamp for the whole publish.

     `row_index` (topic/row_index.py says which, and why):
     - 'one_task' (a small batch): the batch is coalesced into one task (no shuffle: its
       partitions are read in order) and numbered there by `row_number() over (order by
       monotonically_increasing_id())`. One stage after the model's own.
     - 'window' (a large batch without exchange reuse): the same window over the batch
       gathered into one partition by a shuffle.
     - 'parallel' (a large batch): each row is numbered where it is produced --
       spark_partition_id() and monotonically_increasing_id(), whose low 33 bits are the
       row's position within its partition -- plus the number of rows of the partitions
       before its own. `numbered` is referenced twice and is not deterministic, so Spark
       does not inline it: it is evaluated once, into one shuffle that both references
       read (exchange reuse).
     All three give the positions of the window over the model's output order. --#}
{% macro get_stage_topic_batch_sql(staging, topic, sql, tenant, row_index='parallel') -%}
  {%- set parallel_row_index = row_index == 'parallel' -%}
  {%- if staging.kind == 'directory' -%}
  insert overwrite directory {{ adapter.sql_string(staging.target) }} using parquet
  {%- else -%}
  create table {{ staging.target }} using parquet as
  {%- endif %}
  {%- if parallel_row_index %}
  with numbered as (
    select spark_partition_id() as __jammi_part, monotonically_increasing_id() as __jammi_id, topic_batch.*
    from (
      {{ sql }}
    ) as topic_batch
  ),
  part_starts as (
    select __jammi_part,
      coalesce(sum(part_rows) over (order by __jammi_part rows between unbounded preceding and 1 preceding), 0) as __jammi_start
    from (select __jammi_part, count(*) as part_rows from numbered group by __jammi_part) as part_sizes
  )
  select /*+ broadcast(part_starts) */
    cast(__jammi_start + __jammi_id - shiftleft(cast(numbered.__jammi_part as bigint), 33) as bigint) as _row_idx,
  {%- else %}
  select
    cast(row_number() over (order by monotonically_increasing_id()) - 1 as bigint) as _row_idx,
  {%- endif %}
    cast(unix_micros(current_timestamp()) as bigint) as _produced_at,
    {%- for column in topic.columns %}
    cast({{ adapter.quote_column(column[0]) }} as {{ column[1] }}) as {{ adapter.quote_column(column[0]) }},
    {%- endfor %}
    cast({{ adapter.sql_string(tenant) if tenant is not none else 'null' }} as string) as tenant_id
  {%- if parallel_row_index %}
  from numbered join part_starts on numbered.__jammi_part = part_starts.__jammi_part
  {%- elif row_index == 'one_task' %}
  from (
    select /*+ COALESCE(1) */ * from (
      {{ sql }}
    ) as topic_rows
  ) as topic_batch
  {%- else %}
  from (
    {{ sql }}
  ) as topic_batch
  {%- endif %}
{%- endmacro %}


{#-- How the batch is numbered: 'one_task' when Spark estimates it small (no job runs
     for the estimate), else 'parallel', or 'window' when the session does not reuse
     exchanges. Read after the pre-hooks, which may set spark.sql.exchange.reuse. --#}
{% macro topic_row_index_form(sql) -%}
  {%- set plan = jammi_engine_query('explain cost ' ~ sql) -%}
  {%- if adapter.topic_small_batch(plan.rows) -%}
    {{ return('one_task') }}
  {%- endif -%}
  {{ return('parallel' if topic_exchange_reuse() else 'window') }}
{%- endmacro %}


{% macro topic_exchange_reuse() -%}
  {%- set rows = run_query('set spark.sql.exchange.reuse') -%}
  {{ return(rows.rows | length == 0 or (rows.rows[0][1] | string | lower) != 'false') }}
{%- endmacro %}


{#-- The one step readers see: claim the next offset for the staged batch. --#}
{% macro apply_topic_publish(backing, topic, staging) -%}
  {%- set offset = adapter.topic_claim_offset(backing, staging.target, topic.file_format,
                                               topic_stored_columns(topic)) -%}
  {%- if staging.kind == 'table' -%}
    {% do run_query("drop table if exists " ~ staging.target) %}
    {% do adapter.topic_forget_table(staging.target) %}
  {%- endif -%}
  {{ return(offset) }}
{%- endmacro %}


{#-- Last consumed offset of every registered consumer of a topic. --#}
{% macro fetch_topic_consumer_positions(relation, topic_id) -%}
  {%- set consumers = topic_consumers_relation(relation) -%}
  {%- if not adapter.topic_table_known(consumers) and not topic_table_exists(consumers) -%}
    {{ return([]) }}
  {%- endif -%}
  {%- do adapter.topic_remember_table(consumers) -%}
  {%- set rows = run_query("select max(last_offset) from " ~ consumers ~ " where topic_id = "
                           ~ adapter.sql_string(topic_id) ~ " group by consumer, tenant_id") -%}
  {{ return(rows) }}
{%- endmacro %}


{% macro apply_topic_retention(backing, topic, definition) -%}
  {%- if definition.retention_offsets is none and definition.retention_ms is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set stored = run_query("select _offset, max(_produced_at) from " ~ backing ~ " group by _offset") -%}
  {%- set consumers = fetch_topic_consumer_positions(backing, topic.topic_id) -%}
  {%- set plan = adapter.topic_retention_plan(stored, definition.retention_offsets,
                                              definition.retention_ms, consumers) -%}
  {%- set statement_sql = adapter.topic_retention_sql(backing, plan.drop, topic.file_format) -%}
  {%- if statement_sql -%}
    {% do run_query(statement_sql) %}
    {{ log("topic " ~ topic.name ~ ": retention dropped offsets " ~ plan.drop, info=true) }}
  {%- endif -%}
  {%- if plan.held_by_consumers -%}
    {{ log("topic " ~ topic.name ~ ": retention keeps expired offsets " ~ plan.held_by_consumers
           ~ " until every registered consumer has consumed them", info=true) }}
  {%- endif -%}
{%- endmacro %}
