"""The unit_testing wing's face toward Jinja: the ``adapter.unit_test_*`` methods the
topic macros call, and the fixture typing ``JammiAdapter.get_columns_in_relation`` defers
to; unit_testing/fixtures.py decides."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

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


class UnitTestAdapterMixin(metaclass=AdapterMeta):
    """The ``adapter.unit_test_*`` methods the topic macros call, and the fixture typing
    ``JammiAdapter.get_columns_in_relation`` defers to."""

    _fixture_reads = FixtureReads()

    @available
    def unit_test_fixture(self, model: Any, relation: Any, reads: str) -> Optional[str]:
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
        self._fixture_reads.record(str(model.get("unique_id")), name, reads, subject)
        return name

    def _running_node(self) -> Optional[str]:
        connection = self.connections.get_if_exists()  # type: ignore[attr-defined]
        return None if connection is None else connection.name

    def unit_test_fixture_columns(self, relation: Any) -> Optional[list[Any]]:
        """The columns of a unit test fixture given for ``relation`` that the model reads
        as events or stored rows; None when dbt is not typing such a fixture now."""
        taken = self._fixture_reads.take(self._running_node(), str(relation.identifier))
        if taken is None or taken[0] == RELATION:
            return None
        reads, subject = taken
        described = self.describe_for_fixture(relation)  # type: ignore[attr-defined]
        if described is None:
            raise not_built_error(str(relation), subject)
        columns, properties = described
        pairs = fixture_columns(
            reads, [(c.name, c.data_type) for c in columns], properties, str(relation), subject
        )
        return [
            self.Column(  # type: ignore[attr-defined]
                column=name,
                dtype=dtype,
                table_schema=relation.schema,
                table_name=relation.identifier,
                column_index=index,
            )
            for index, (name, dtype) in enumerate(pairs)
        ]

    @available
    def unit_test_check_fixture_values(self, relation: Any, rows: Any, columns: Any) -> None:
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

    def unit_test_forget_fixtures(self) -> None:
        """Drop what the node now running recorded (its fixtures are typed by now)."""
        self._fixture_reads.forget(self._running_node())
