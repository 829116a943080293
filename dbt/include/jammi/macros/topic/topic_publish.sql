{#-- The batch as it is staged, and how it is numbered. Where it is staged, retention and
     the publish commit are the adapter's (topic/topic_service.py: topic_prepare_staging,
     topic_apply_retention, topic_publish). --#}

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
     All three give the positions of the window over the model's output order.
     - 'ordered' (config row_idx: ordered): monotonically_increasing_id() itself, in the
       batch's own stage: unique and increasing in the model's output order, with a gap
       after each of Spark's tasks (the task's number in the high bits). --#}
{% macro get_stage_topic_batch_sql(staging, topic, sql, tenant, row_index='parallel') -%}
  {%- set parallel_row_index = row_index == 'parallel' -%}
  {%- if staging.kind == 'directory' -%}
  insert overwrite directory {{ adapter.sql_string(staging.target) }} using parquet
  {%- else -%}
  create table {{ staging.target }} using {{ staging.using }} as
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
  {%- elif row_index == 'ordered' %}
  select
    cast(monotonically_increasing_id() as bigint) as _row_idx,
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
