"""dbt's cross-database macros (`dbt.tests.adapter.utils`) as dbt-spark implements them,
under `type: jammi` on the embedded session with parquet."""

import pytest
from dbt.tests.adapter.utils.test_any_value import BaseAnyValue
from dbt.tests.adapter.utils.test_array_append import BaseArrayAppend
from dbt.tests.adapter.utils.test_array_concat import BaseArrayConcat
from dbt.tests.adapter.utils.test_array_construct import BaseArrayConstruct
from dbt.tests.adapter.utils.test_bool_or import BaseBoolOr
from dbt.tests.adapter.utils.test_cast import BaseCast
from dbt.tests.adapter.utils.test_cast_bool_to_text import BaseCastBoolToText
from dbt.tests.adapter.utils.test_concat import BaseConcat
from dbt.tests.adapter.utils.test_current_timestamp import BaseCurrentTimestampNaive
from dbt.tests.adapter.utils.test_date import BaseDate
from dbt.tests.adapter.utils.test_date_trunc import BaseDateTrunc
from dbt.tests.adapter.utils.test_dateadd import BaseDateAdd
from dbt.tests.adapter.utils.test_datediff import BaseDateDiff
from dbt.tests.adapter.utils.test_equals import BaseEquals
from dbt.tests.adapter.utils.test_escape_single_quotes import BaseEscapeSingleQuotesBackslash
from dbt.tests.adapter.utils.test_except import BaseExcept
from dbt.tests.adapter.utils.test_hash import BaseHash
from dbt.tests.adapter.utils.test_intersect import BaseIntersect
from dbt.tests.adapter.utils.test_last_day import BaseLastDay
from dbt.tests.adapter.utils.test_length import BaseLength
from dbt.tests.adapter.utils.test_null_compare import BaseMixedNullCompare, BaseNullCompare
from dbt.tests.adapter.utils.test_position import BasePosition
from dbt.tests.adapter.utils.test_replace import BaseReplace
from dbt.tests.adapter.utils.test_right import BaseRight
from dbt.tests.adapter.utils.test_safe_cast import BaseSafeCast
from dbt.tests.adapter.utils.test_split_part import BaseSplitPart
from dbt.tests.adapter.utils.test_string_literal import BaseStringLiteral

pytestmark = pytest.mark.dbt_spark_suite

# Not run: BaseListagg (dbt-spark's listagg ignores `order by` and warns, so the ordered
# cases differ; the same under type: spark) and BaseCurrentTimestamps (asserts
# Postgres SQL and types). BaseRight, BaseReplace and BaseSplitPart load NULL seed cells,
# which dbt-spark's session wrapper used to load as the string 'None'
# (dbt/adapters/jammi/engine/bindings.py).


class TestAnyValueJammi(BaseAnyValue):
    pass


class TestArrayAppendJammi(BaseArrayAppend):
    pass


class TestArrayConcatJammi(BaseArrayConcat):
    pass


class TestArrayConstructJammi(BaseArrayConstruct):
    pass


class TestBoolOrJammi(BaseBoolOr):
    pass


class TestCastJammi(BaseCast):
    pass


class TestCastBoolToTextJammi(BaseCastBoolToText):
    pass


class TestConcatJammi(BaseConcat):
    pass


class TestCurrentTimestampJammi(BaseCurrentTimestampNaive):
    pass


class TestDateJammi(BaseDate):
    pass


class TestDateAddJammi(BaseDateAdd):
    pass


class TestDateDiffJammi(BaseDateDiff):
    """As a table: the test model's SQL is longer than the 32,700 characters the Derby
    metastore of the embedded session can store as a view's text (TBLS.VIEW_EXPANDED_TEXT);
    the same under type: spark."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+materialized": "table"}}


class TestDateTruncJammi(BaseDateTrunc):
    pass


class TestEqualsJammi(BaseEquals):
    pass


class TestEscapeSingleQuotesJammi(BaseEscapeSingleQuotesBackslash):
    pass


class TestExceptJammi(BaseExcept):
    pass


class TestHashJammi(BaseHash):
    pass


class TestIntersectJammi(BaseIntersect):
    pass


class TestLastDayJammi(BaseLastDay):
    pass


class TestLengthJammi(BaseLength):
    pass


class TestNullCompareJammi(BaseNullCompare):
    pass


class TestMixedNullCompareJammi(BaseMixedNullCompare):
    pass


class TestPositionJammi(BasePosition):
    pass


class TestReplaceJammi(BaseReplace):
    pass


class TestRightJammi(BaseRight):
    pass


class TestSafeCastJammi(BaseSafeCast):
    pass


class TestSplitPartJammi(BaseSplitPart):
    pass


class TestStringLiteralJammi(BaseStringLiteral):
    pass
