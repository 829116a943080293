{#-- The version rule (docs/mutable_table.md#version-rule): version_column names one
     column of any orderable type, or a list compared in order (['batch_at', 'seq']: a
     later batch_at wins, an equal one with a higher seq). Every planner, check and
     applier reads the version through these macros; the rule's columns in comparison
     order are

       [definition.version_column] if definition.version_column is string else (definition.version_column or [])

     (an expression, not a macro: a macro's value is text). --#}

{#-- The version as one orderable value: the column itself, or a struct of the columns in
     order (Spark orders structs field by field). Each column is rendered as `prefix`
     followed by its quoted name (quote=false: the bare name, for the planner's s_/t_
     aliases). --#}
{% macro mutable_version_expr(definition, prefix='', quote=true) -%}
  {%- set parts = [] -%}
  {%- for c in ([definition.version_column] if definition.version_column is string else (definition.version_column or [])) -%}
    {%- do parts.append(prefix ~ (adapter.quote_column(c) if quote else c)) -%}
  {%- endfor -%}
  {%- if parts | length == 1 -%}
    {{ parts[0] }}
  {%- else -%}
    named_struct({% for p in parts %}'v{{ loop.index0 }}', {{ p }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endif -%}
{%- endmacro %}


{#-- True when a row's version is NULL in any part (a batch check refuses it). --#}
{% macro mutable_version_is_null(definition, prefix='') -%}
  ({% for c in ([definition.version_column] if definition.version_column is string else (definition.version_column or [])) %}{{ prefix }}{{ adapter.quote_column(c) }} is null{{ ' or ' if not loop.last }}{% endfor %})
{%- endmacro %}


{#-- True when the batch row's version `s` is newer than the stored row's `t`, or the
     stored row has none (a stored NULL version is older than any). --#}
{% macro mutable_version_newer(definition, s_prefix, t_prefix, quote=true) -%}
  coalesce({{ mutable_version_expr(definition, s_prefix, quote) }} > {{ mutable_version_expr(definition, t_prefix, quote) }}, true)
{%- endmacro %}


{#-- The version columns as a select list / group by list (each quoted, with `prefix`). --#}
{% macro mutable_version_list(definition, prefix='') -%}
  {%- for c in ([definition.version_column] if definition.version_column is string else (definition.version_column or [])) %}{{ prefix }}{{ adapter.quote_column(c) }}{{ ', ' if not loop.last }}{% endfor -%}
{%- endmacro %}
