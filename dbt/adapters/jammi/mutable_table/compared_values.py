"""How values Spark cannot compare are compared: by their JSON text (docs/mutable_table.md,
"Types", under Configs).

Spark compares no maps and no variants. Where a value column holds one, the planner
(``mutable_same_value`` in planner/change_set.sql) and the collapse of re-delivered rows
(redelivery.py) compare the value's JSON text instead: a map by its entries in key
order, any other type holding a map or a variant by ``to_json`` of the whole value.

``to_json`` prints timestamps to the millisecond unless told otherwise, so two values a
microsecond apart would read the same and the change would be lost. The text is
therefore written with every microsecond (``JSON_OPTIONS``). A variant is printed by its
own rules (with every microsecond) and takes no options.
"""

from __future__ import annotations

from typing import Optional

from dbt.adapters.jammi.common.types import holds_variant, normalize_type

# The same text stands in mutable_same_value / mutable_map_entries_json
# (planner/change_set.sql; tests/unit/mutable_table/test_compared_values.py keeps them one).
JSON_OPTIONS = (
    "map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX', "
    "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS')"
)

_ENTRY_ORDER = "(l, r) -> case when l.key < r.key then -1 when l.key > r.key then 1 else 0 end"


def compared_text(value: str, spark_type: str) -> Optional[str]:
    """The JSON text ``value`` (of ``spark_type``) is compared by, or None where Spark
    compares the value itself."""
    t = normalize_type(spark_type)
    options = "" if holds_variant(t) else f", {JSON_OPTIONS}"
    if t.startswith("map<"):
        return f"to_json(array_sort(map_entries({value}), {_ENTRY_ORDER}){options})"
    if "map<" in t or holds_variant(t):
        return f"to_json({value}{options})"
    return None
