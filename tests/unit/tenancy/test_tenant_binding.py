"""Which tenant a run is bound to: var jammi_tenant, else the profile field; an empty or
blank value is an error, never a silent unbound run."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.tenancy.tenancy_service import TenancyService


def bound(override, profile_tenant=None):
    sql = SimpleNamespace(credentials=SimpleNamespace(tenant=profile_tenant))
    return TenancyService(sql).bound_tenant(override)  # type: ignore[arg-type]


def test_var_wins_over_profile_and_unset_means_unbound():
    assert bound(None) is None
    assert bound(None, "acme") == "acme"
    assert bound("globex", "acme") == "globex"


@pytest.mark.parametrize("value", ["", " ", "\t "])
@pytest.mark.parametrize("profile_tenant", [None, "acme"])
def test_empty_or_blank_var_is_an_error(value, profile_tenant):
    with pytest.raises(JammiValidationError) as info:
        bound(value, profile_tenant)
    message = str(info.value)
    assert "jammi_tenant" in message and "Fix:" in message


def test_blank_profile_tenant_is_an_error():
    with pytest.raises(JammiValidationError, match="non-empty"):
        JammiCredentials(method="session", schema="s", host="h", tenant="  ")
