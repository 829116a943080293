"""Registering a topic while another run registers it too (docs/architecture.md: one backing
table per topic name, whatever the timing), and the view named after the model.

The embedded metastore belongs to one JVM, so the "other run" meets this one there.
The interleaving is forced, not timed: ``resolve_file_format`` is called by the first
publish after it has found the topic unregistered and before it writes anything, and
the tests hook it to let the rival register at exactly that point.
"""

from __future__ import annotations

import threading

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.jammi.impl import JammiAdapter
from tests.functional.topic.fixtures import CDC_ORDERS_SQL, TopicProject, registration, rows


def topic_tables(schema: str) -> list[str]:
    return sorted(r[1] for r in rows(f"SHOW TABLES IN {schema} LIKE '__topic_*'"))


def view_text(relation: str) -> str:
    return [r[1] for r in rows(f"DESCRIBE TABLE EXTENDED {relation}") if r[0] == "View Text"][0]


class TestTopicFirstPublishRace(TopicProject):
    """Two first publishes of one model: the rival registers between this run's look at
    the registry and its own registration."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_loser_publishes_into_the_winners_backing_table(self, project, monkeypatch):
        schema = project.test_schema
        original_definition = JammiAdapter.topic_definition
        original_resolve = JammiAdapter.resolve_file_format
        seen: dict = {}

        def topic_definition(self, model_name, columns, config):
            seen["args"] = (model_name, columns, config)
            return original_definition(self, model_name, columns, config)

        def resolve_file_format(self, requested, model_name):
            if not seen.get("rival_done"):
                seen["rival_done"] = True
                # the rival: the same model's registration, complete, with its own uuid
                name, columns, config = seen["args"]
                relation = self.Relation.create(schema=schema, identifier="cdc_orders", type="view")
                definition = original_definition(self, name, columns, config)
                self.topic_register(relation, definition, name, config.get("file_format"))
                seen["rival_topic_id"] = definition["topic_id"]
            return original_resolve(self, requested, model_name)

        monkeypatch.setattr(JammiAdapter, "topic_definition", topic_definition)
        monkeypatch.setattr(JammiAdapter, "resolve_file_format", resolve_file_format)
        results = run_dbt(["run", "--vars", "{batch: 1}"])
        monkeypatch.undo()
        assert [r.status for r in results] == ["success"]

        # one registration, the rival's; its backing table is the only one
        topic_id, _, backing = registration(schema)
        assert topic_id == seen["rival_topic_id"]
        assert topic_tables(schema) == [backing]
        # the view and the registry agree, and the batch went into that table
        assert backing in view_text(f"{schema}.cdc_orders")
        assert rows(f"SELECT _offset, count(*) FROM {schema}.{backing} GROUP BY 1") == [(1, 3)]
        assert rows(f"SELECT count(*) FROM {schema}.cdc_orders") == [(3,)]

        run_dbt(["run", "--vars", "{batch: 2}"])
        assert rows(f"SELECT max(_offset), count(*) FROM {schema}.cdc_orders") == [(2, 5)]


ORDERS_A_SQL = CDC_ORDERS_SQL
ORDERS_B_SQL = CDC_ORDERS_SQL.replace("select order_id", "select order_id + 100 as order_id")


OTHER_TOPIC_SQL = "{{ config(materialized='topic', topic_name='cdc.other') }} select 1 as id"


class TestTopicNameRace(TopicProject):
    """Two models that claim one topic_name, built at the same time (--threads 2): both
    have found the name free before either registers. Here the registry does not exist
    yet either, so both also create it at once."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders_a.sql": ORDERS_A_SQL,
            "orders_b.sql": ORDERS_B_SQL,
            "other_topic.sql": OTHER_TOPIC_SQL,
        }

    def prepare(self):
        pass

    def test_one_model_gets_the_name(self, project, monkeypatch):
        schema = project.test_schema
        self.prepare()
        original_resolve = JammiAdapter.resolve_file_format
        barrier = threading.Barrier(2, timeout=60)

        def resolve_file_format(self, requested, model_name):
            barrier.wait()  # both models have looked at the registry
            return original_resolve(self, requested, model_name)

        monkeypatch.setattr(JammiAdapter, "resolve_file_format", resolve_file_format)
        results = run_dbt(
            ["run", "--threads", "2", "--select", "orders_a", "orders_b"], expect_pass=False
        )
        monkeypatch.undo()

        statuses = sorted(str(r.status) for r in results)
        assert statuses == ["error", "success"], statuses
        loser = next(r for r in results if str(r.status) == "error")
        assert "topic_name 'cdc.orders' is already used by model" in loser.message
        assert "Fix: set a different topic_name" in loser.message
        _, _, backing = registration(schema)  # exactly one registry row for the name
        assert backing in topic_tables(schema)
        assert len(topic_tables(schema)) == len(rows(f"SELECT * FROM {schema}.topics"))


class TestTopicNameRaceRegistryExists(TestTopicNameRace):
    """The same race on a registry that already lists another topic."""

    def prepare(self):
        run_dbt(["run", "--select", "other_topic"])


class TestTopicViewKept(TopicProject):
    """A publish leaves a correct view alone and repairs a wrong one."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_view_is_only_recreated_when_wrong(self, project):
        schema = project.test_schema
        view = f"{schema}.cdc_orders"
        run_dbt(["run", "--vars", "{batch: 1}"])
        rows(f"ALTER VIEW {view} SET TBLPROPERTIES ('test.probe' = 'untouched')")

        run_dbt(["run", "--vars", "{batch: 2}"])
        properties = dict(rows(f"SHOW TBLPROPERTIES {view}"))
        assert properties.get("test.probe") == "untouched"  # not dropped and re-created
        assert rows(f"SELECT count(*) FROM {view}") == [(5,)]

        # a wrong view (here: one a user replaced) is put right by the next publish
        rows(f"CREATE OR REPLACE VIEW {view} AS SELECT 1 AS x")
        run_dbt(["run", "--vars", "{batch: 3}"])
        _, _, backing = registration(schema)
        assert backing in view_text(view)
        assert rows(f"SELECT max(_offset), count(*) FROM {view}") == [(3, 8)]
