"""The unit_testing wing's service: the fixtures the topic macros read in a dbt unit test
(``adapter.unit_test_*`` on the face, impl.py), and the fixture typing
``JammiAdapter.get_columns_in_relation`` defers to; unit_testing/fixtures.py decides."""

from __future__ import annotations

from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.unit_testing.fixture_values import fixture_value_error
from dbt.adapters.jammi.unit_testing.fixtures import (
    READS,
    RELATION,
    FixtureReads,
    fixture_columns,
    fixture_name,
    is_unit_test,
    not_built_error,
    require_fixture,
    unit_test_subject,
)

# How each unit test read its fixtures, kept for the process: dbt types a fixture after
# the tested model's SQL recorded the read (keyed by the node's connection).
FIXTURE_READS = FixtureReads()

# a relation's columns and jammi.* properties, None when it does not exist
Describe = Callable[[Any], Optional[tuple[list[Any], dict[str, str]]]]


class UnitTestingService:
    """``describe``: a relation's columns and properties (the adapter's
    ``describe_for_fixture``); ``column``: the adapter's Column class."""

    def __init__(
        self,
        sql: SqlSession,
        describe: Describe,
        column: Callable[..., Any],
        reads: FixtureReads = FIXTURE_READS,
    ) -> None:
        self.sql, self.describe, self.column, self.reads = sql, describe, column, reads

    def fixture(self, model: Any, relation: Any, reads: str) -> Optional[str]:
        """Outside a unit test: None. Inside one: the fixture ``relation`` names, recorded
        as read ``reads`` (``events``, ``rows``, ``relation``). A topic read of something
        that is not a fixture is an error; ``tenant_scoped`` of one reads it as is."""
        if not is_unit_test(model):
            return None
        if reads not in READS:
            raise ValueError(f"unknown fixture read {reads!r}")
        subject = unit_test_subject(model)
        if reads == RELATION:
            name = fixture_name(relation)
            if name is None:
                return None
        else:
            name = require_fixture(relation, reads, subject)
        self.reads.record(str(model.get("unique_id")), name, reads, subject)
        return name

    def fixture_columns(self, relation: Any) -> Optional[list[Any]]:
        """The columns of a unit test fixture given for ``relation`` that the model reads
        as events or stored rows; None when dbt is not typing such a fixture now."""
        taken = self.reads.take(self.sql.running_node(), str(relation.identifier))
        if taken is None or taken[0] == RELATION:
            return None
        reads, subject = taken
        described = self.describe(relation)
        if described is None:
            raise not_built_error(str(relation), subject)
        columns, properties = described
        pairs = fixture_columns(
            reads, [(c.name, c.data_type) for c in columns], properties, str(relation), subject
        )
        return [
            self.column(
                column=name,
                dtype=dtype,
                table_schema=relation.schema,
                table_name=relation.identifier,
                column_index=index,
            )
            for index, (name, dtype) in enumerate(pairs)
        ]

    @staticmethod
    def check_fixture_values(relation: Any, rows: Any, columns: Any) -> None:
        """Refuse a fixture value given for ``relation`` that its column's type cannot
        hold exactly (fixture_values.py); ``columns``: the relation's columns."""
        if not isinstance(rows, (list, tuple)):
            return
        types = {str(c.name).lower(): str(c.data_type) for c in columns or []}
        error = fixture_value_error(
            f"unit test fixture for {relation}", [r for r in rows if isinstance(r, dict)], types
        )
        if error is not None:
            raise error

    def forget_fixtures(self) -> None:
        """Drop what the node now running recorded (its fixtures are typed by now)."""
        self.reads.forget(self.sql.running_node())
