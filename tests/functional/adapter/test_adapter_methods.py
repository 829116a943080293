"""dbt-tests-adapter suites for adapter methods, relation-type changes, hooks and
persist_docs under `type: jammi` (dbt-spark's macros, parquet, embedded session)."""

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.hooks.test_model_hooks import (
    BaseDuplicateHooksInConfigs,
    BaseHooksRefsOnSeeds,
)
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsQuotedColumnCaseSensitive,
)
from dbt.tests.adapter.relations.test_changing_relation_type import (
    BaseChangeRelationTypeValidator,
)

pytestmark = pytest.mark.dbt_spark_suite


class TestAdapterMethodJammi(BaseAdapterMethod):
    pass


class TestChangeRelationTypeJammi(BaseChangeRelationTypeValidator):
    pass


# Hooks. The pre/post model and run hook suites (BasePrePostModelHooks,
# BasePrePostRunHooks and their variants) assert a Postgres target (`target_type ==
# 'postgres'`, `vacuum`, TEXT columns, double-quoted identifiers) and the seed/snapshot
# hook suites run `update` (Delta only on Spark) and `::` casts (Spark 4 only); dbt-spark
# does not run them either. BaseAfterRunHooks expects a DbtDatabaseError where dbt-spark
# raises DbtRuntimeError for every failing statement (on every connection method).
# tests/functional/adapter/test_session_defaults.py runs a model pre-hook and post-hook.
class TestHooksRefsOnSeedsJammi(BaseHooksRefsOnSeeds):
    pass


class TestDuplicateHooksInConfigsJammi(BaseDuplicateHooksInConfigs):
    pass


# persist_docs. dbt-spark writes column comments only for delta/hudi/iceberg, so the
# suites that read column comments back (BasePersistDocs, BasePersistDocsColumnMissing,
# BasePersistDocsCommentOnQuotedColumn) cannot pass on parquet, under type: spark too.
class TestPersistDocsAllColumnsMissingJammi(BasePersistDocsAllColumnsMissing):
    pass


class TestPersistDocsQuotedColumnCaseSensitiveJammi(BasePersistDocsQuotedColumnCaseSensitive):
    pass
