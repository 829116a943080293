"""Race-free topic registration and the view named after the model, without Spark:
the claim and view decisions against a fake metastore, and the rendered SQL."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.topic.registration import (
    TopicRegistrationError,
    apply_view,
    check_catalog_service_format,
    claim_iceberg_registration,
    claim_registration,
    create_if_absent,
    topic_storage_format,
    view_fingerprint,
)
from dbt.adapters.jammi.topic.registry_sql import (
    create_registry_sql,
    create_view_sql,
    iceberg_claim_registration_sql,
    stage_registration_sql,
    view_select_sql,
)
from tests.unit.topic.test_topic_macros import TOPIC, flat

SUBJECT = "topic 'cdc_orders'"
ICEBERG_TOPIC = dict(TOPIC, file_format="iceberg", relation_name="r")


class FakeRegistry:
    """ALTER TABLE topics ADD PARTITION (name=...): a unique key per name."""

    def __init__(self, names=(), partitioned=True):
        self.names = set(names)
        self.partitioned = partitioned
        self.statements = []

    def __call__(self, sql):
        self.statements.append(sql)
        if not self.partitioned:
            raise RuntimeError("[NOT_A_PARTITIONED_TABLE] ALTER TABLE ADD PARTITION ...")
        name = sql.split("name='")[1].split("'")[0]
        if name in self.names:
            raise RuntimeError(f"[PARTITIONS_ALREADY_EXIST] partition name = {name}")
        self.names.add(name)
        return []


def test_first_claim_of_a_name_wins_and_attaches_the_staged_row():
    registry = FakeRegistry()
    assert claim_registration(registry, "s.topics", "cdc.orders", "file:/w/_staging/p", SUBJECT)
    assert registry.statements == [
        "alter table s.topics add partition (name='cdc.orders') location 'file:/w/_staging/p'"
    ]


def test_second_claim_of_a_name_loses():
    registry = FakeRegistry({"cdc.orders"})
    assert not claim_registration(registry, "s.topics", "cdc.orders", "/p2", SUBJECT)
    assert claim_registration(registry, "s.topics", "cdc.refunds", "/p3", SUBJECT)


def test_claim_on_an_unpartitioned_registry_says_how_to_migrate():
    with pytest.raises(TopicRegistrationError) as error:
        claim_registration(FakeRegistry(partitioned=False), "s.topics", "a.b", "/p", SUBJECT)
    message = str(error.value)
    assert "topic 'cdc_orders': the registry s.topics" in message
    assert "Fix:" in message and "nothing was registered" in message


def test_claim_passes_other_errors_through():
    def broken(sql):
        raise RuntimeError("metastore unreachable")

    with pytest.raises(RuntimeError, match="unreachable"):
        claim_registration(broken, "s.topics", "a.b", "/p", SUBJECT)


def test_create_if_absent_tolerates_a_concurrent_creator():
    def raced(sql):
        raise RuntimeError("[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table s.topics")

    assert create_if_absent(lambda sql: [], "create table if not exists s.topics (a int)")
    assert not create_if_absent(raced, "create table if not exists s.topics (a int)")


class FakeViews:
    """SHOW TBLPROPERTIES (the fingerprint; "not found" without a view) / CREATE [OR
    REPLACE] VIEW of one view; `rival` creates the view (with `rival_fingerprint`) right
    before this run's statement."""

    def __init__(self, fingerprint=None, rival_fingerprint=None, rival_times=0):
        self.fingerprint = fingerprint  # None: no view
        self.rival_fingerprint = rival_fingerprint
        self.rival_times = rival_times
        self.created = []
        self.looks = 0

    def __call__(self, sql):
        if sql.startswith("show tblproperties"):
            assert sql == "show tblproperties s.cdc_orders ('jammi.view_fingerprint')"
            self.looks += 1
            if self.fingerprint is None:
                raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table or view s.cdc_orders")
            if self.fingerprint == "":
                return [("jammi.view_fingerprint", "Table s.cdc_orders does not have property")]
            return [("jammi.view_fingerprint", self.fingerprint)]
        if sql.startswith("create"):
            if self.rival_times:
                self.rival_times -= 1
                self.fingerprint = self.rival_fingerprint
                raise RuntimeError("[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create view")
            self.created.append(sql)
            self.fingerprint = sql.split("fp=")[1]
            return []
        raise AssertionError(sql)


def view(run_sql, fingerprint="f1"):
    return apply_view(
        run_sql,
        "s",
        "cdc_orders",
        f"create view s.cdc_orders fp={fingerprint}",
        f"create or replace view s.cdc_orders fp={fingerprint}",
        fingerprint,
        SUBJECT,
    )


def test_a_right_view_is_left_alone():
    views = FakeViews(fingerprint="f1")
    assert view(views) == "kept"
    assert views.created == []
    assert views.looks == 1  # one statement tells existence and fingerprint


def test_a_missing_view_is_created_without_replace():
    views = FakeViews()
    assert view(views) == "created"
    assert views.created == ["create view s.cdc_orders fp=f1"]


def test_a_wrong_view_is_replaced():
    views = FakeViews(fingerprint="")
    assert view(views) == "replaced"
    assert views.created == ["create or replace view s.cdc_orders fp=f1"]


def test_a_concurrent_run_creating_the_same_view_is_not_an_error():
    views = FakeViews(rival_fingerprint="f1", rival_times=1)
    assert view(views) == "kept"
    assert views.created == []


def test_a_view_that_keeps_changing_fails_clearly():
    views = FakeViews(rival_fingerprint="other", rival_times=10)
    with pytest.raises(TopicRegistrationError) as error:
        view(views)
    message = str(error.value)
    assert "topic 'cdc_orders': the view s.cdc_orders" in message
    assert "TABLE_OR_VIEW_ALREADY_EXISTS" in message
    assert "Fix: make sure only one version of this model runs at a time" in message


def test_fingerprint_ignores_whitespace_only():
    assert view_fingerprint("select a\n  from t") == view_fingerprint("select a from t")
    assert view_fingerprint("select a from t") != view_fingerprint("select a from u")


# --- rendered SQL -----------------------------------------------------------------


def test_registry_is_partitioned_by_name():
    sql = flat(create_registry_sql("s.topics"))
    assert sql.startswith("create table if not exists s.topics ( topic_id string, name string,")
    assert "using parquet partitioned by (name)" in sql


def test_staged_registry_row_has_every_column_but_the_partition():
    topic = dict(TOPIC, file_format="parquet", retention_offsets=5, retention_ms=None)
    sql = flat(stage_registration_sql("file:/w/_staging/p", topic, "cdc_orders"))
    assert sql.startswith("insert overwrite directory 'file:/w/_staging/p' using parquet select")
    for column in (
        "topic_id",
        "backing_table",
        "relation_name",
        "schema_json",
        "file_format",
        "retention_offsets",
        "retention_ms",
        "created_at",
    ):
        assert f"as {column}" in sql
    assert "as name" not in sql
    assert "'cdc_orders' as relation_name" in sql
    assert "cast(5 as bigint) as retention_offsets" in sql
    assert "cast(null as bigint) as retention_ms" in sql


def test_view_sql_carries_its_fingerprint_and_creates_without_replace():
    select = flat(view_select_sql("s.__topic_x", TOPIC))
    fingerprint = view_fingerprint(select)
    create = flat(create_view_sql("s.cdc_orders", "s.__topic_x", TOPIC, fingerprint, False))
    replace = flat(create_view_sql("s.cdc_orders", "s.__topic_x", TOPIC, fingerprint, True))
    assert create.startswith("create view s.cdc_orders comment")
    assert replace.startswith("create or replace view s.cdc_orders comment")
    expected = f"tblproperties ('jammi.view_fingerprint' = '{view_fingerprint(select)}')"
    assert expected in create and expected in replace
    assert create.endswith(f"as {select}")


@pytest.mark.parametrize(
    "resolved, stored",
    [("delta", "delta"), ("iceberg", "iceberg"), ("parquet", "parquet"), ("orc", "parquet")],
)
def test_topics_store_events_in_their_table_format_or_parquet(resolved, stored):
    # delta and iceberg claim offsets in the table's own commit; others as partitions
    assert topic_storage_format(resolved) == stored


# --- a catalog service: the registry is an Iceberg table, claimed by a MERGE ----------


def test_iceberg_registry_is_unpartitioned_and_validates_serializably():
    sql = flat(create_registry_sql("s.topics", "iceberg"))
    assert sql.startswith("create table if not exists s.topics ( topic_id string, name string,")
    assert "using iceberg" in sql and "partitioned by" not in sql
    assert "'write.merge.isolation-level' = 'serializable'" in sql


def test_iceberg_claim_inserts_the_row_or_raises_on_the_name():
    candidate = dict(ICEBERG_TOPIC, relation_name="cdc_orders")
    sql = flat(iceberg_claim_registration_sql("s.topics", candidate, "cdc_orders"))
    assert sql.startswith("merge into s.topics target using (select 'cdc.orders' as name, ")
    assert "'cdc_orders' as relation_name" in sql
    assert "on target.name = 'cdc.orders' and target.name = source.name" in sql
    assert (
        "when matched then update set target.name = cast(raise_error("
        "'jammi: topic name already registered: cdc.orders') as string)" in sql
    )
    assert sql.endswith(
        "when not matched then insert (topic_id, name, backing_table, relation_name, "
        "schema_json, file_format, retention_offsets, retention_ms, created_at) values "
        "(source.topic_id, source.name, source.backing_table, source.relation_name, "
        "source.schema_json, source.file_format, source.retention_offsets, "
        "source.retention_ms, source.created_at)"
    )


class FakeIcebergRegistry:
    """The claim MERGE: refused by validation ``conflicts`` times (another registration
    committed after its scan), then it finds the name taken or inserts it."""

    def __init__(self, taken=False, conflicts=0, error=None):
        self.taken, self.conflicts, self.error = taken, conflicts, error
        self.merges = 0

    def __call__(self, sql):
        assert sql.startswith("merge into s.topics")
        self.merges += 1
        if self.error:
            raise RuntimeError(self.error)
        if self.conflicts:
            self.conflicts -= 1
            self.taken = True  # what committed was the same name's registration
            raise RuntimeError(
                "org.apache.iceberg.exceptions.ValidationException: Found conflicting files "
                'that can contain records matching ref(name="name") == "cdc.orders"'
            )
        if self.taken:
            raise RuntimeError("jammi: topic name already registered: cdc.orders")
        self.taken = True
        return []


def test_iceberg_claim_of_a_free_name_wins():
    registry = FakeIcebergRegistry()
    assert claim_iceberg_registration(registry, "s.topics", ICEBERG_TOPIC)
    assert registry.merges == 1


def test_iceberg_claim_raced_by_the_same_name_loses_after_retrying():
    registry = FakeIcebergRegistry(conflicts=1)
    assert not claim_iceberg_registration(registry, "s.topics", ICEBERG_TOPIC)
    assert registry.merges == 2


def test_iceberg_claim_passes_other_errors_through():
    registry = FakeIcebergRegistry(error="[TABLE_OR_VIEW_NOT_FOUND] s.topics")
    with pytest.raises(RuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        claim_iceberg_registration(registry, "s.topics", ICEBERG_TOPIC)


def test_a_catalog_service_refuses_topics_in_another_format():
    check_catalog_service_format("iceberg", "iceberg", SUBJECT, "lake")
    check_catalog_service_format("parquet", "parquet", SUBJECT, "spark_catalog")
    with pytest.raises(TopicRegistrationError) as refused:
        check_catalog_service_format("delta", "iceberg", SUBJECT, "lake")
    assert "file_format 'delta' on a session whose default catalog is 'lake'" in str(refused.value)
    assert "set file_format: iceberg or auto" in str(refused.value)
