"""What a service may do with dbt's relations, given by the adapter as callables: make
one (``Relation.create``), look one up in dbt's relation cache (only where dbt listed the
schema in this invocation) or in the catalog, and drop one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Relations:
    # the adapter's Relation.create
    create: Callable[..., Any]
    # dbt's cached relations of (database, schema); None unless dbt listed that schema
    listed: Callable[[Any, Any], Optional[Sequence[Any]]]
    # the adapter's get_relation(database, schema, identifier) and drop_relation
    get_relation: Callable[[Any, Any, Any], Any]
    drop_relation: Callable[[Any], Any]

    def table(self, schema: Any, identifier: str, database: Any = None) -> Any:
        """The table ``identifier`` in ``schema``."""
        if database is None:
            return self.create(schema=schema, identifier=identifier, type="table")
        return self.create(database=database, schema=schema, identifier=identifier, type="table")

    def listed_information(self, relation: Any) -> Optional[str]:
        """What dbt's relation cache holds about ``relation``; None unless dbt has
        listed its schema in this invocation (never lists it here)."""
        cached = self.listed(relation.database, relation.schema)
        if cached is None:
            return None
        identifier = str(relation.identifier).lower()
        for relation_seen in cached:
            if str(relation_seen.identifier).lower() == identifier:
                return getattr(relation_seen, "information", None)
        return None
