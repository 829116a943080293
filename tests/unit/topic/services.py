"""The topic wing's services over a recorded engine: what a unit test of a publish, a
consumer or the tail builds instead of an adapter (no dbt, no Spark)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.relations import Relations
from dbt.adapters.jammi.common.sql_session import DEFAULT_CATALOG
from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.topic.metadata import TopicMetadataCache
from dbt.adapters.jammi.topic.registry_service import TopicRegistryService
from dbt.adapters.jammi.topic.topic_service import TopicService


class RecordedSql:
    """The services' SQL interface: every statement goes to ``run`` (its rows);
    ``trusted`` statements are answered with none, after ``run`` saw them."""

    def __init__(self, run: Callable[[str], Any], local_fs: bool = False) -> None:
        self.run, self.local_filesystem = run, local_fs

    def rows(self, sql: str) -> Any:
        return self.run(sql)

    def trusted(self, sql: str) -> None:
        self.run(sql)

    def default_catalog(self) -> str:
        return DEFAULT_CATALOG


def unlisted(database: Any, schema: Any) -> Optional[list[Any]]:
    return None


def topic_services(
    run: Callable[[str], Any], local_fs: bool = False
) -> tuple[TopicService, TopicRegistryService]:
    """A publish's and a registry's service over ``run``, with a cache of their own."""
    sql: Any = RecordedSql(run, local_fs)
    relations = Relations(
        create=JammiAdapter.Relation.create,
        listed=unlisted,
        get_relation=lambda *_: None,
        drop_relation=lambda _: None,
    )

    def no_format(requested: Any, model: str) -> str:
        raise AssertionError("a unit test resolved a file format")

    registry = TopicRegistryService(sql, relations, no_format, TopicMetadataCache())
    return TopicService(sql, registry, relations), registry
