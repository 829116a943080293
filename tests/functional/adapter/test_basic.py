"""dbt-tests-adapter base suites with `type: jammi` on the embedded session."""

import pytest
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral


@pytest.mark.smoke
class TestSimpleMaterializationsJammi(BaseSimpleMaterializations):
    pass


class TestSingularTestsJammi(BaseSingularTests):
    pass


class TestSingularTestsEphemeralJammi(BaseSingularTestsEphemeral):
    pass


class TestEmptyJammi(BaseEmpty):
    pass


class TestEphemeralJammi(BaseEphemeral):
    pass


class TestGenericTestsJammi(BaseGenericTests):
    pass


class TestIncrementalJammi(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "parquet", "+incremental_strategy": "append"}}
