"""The one check of a refused definition, shared by the unit tests."""

from __future__ import annotations

from typing import Callable

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError


def rejects(build: Callable[[], object], *fragments: str) -> str:
    """``build()`` raises JammiValidationError whose message gives a fix and holds every
    one of ``fragments`` (the model, the option, the problem); returns the message."""
    with pytest.raises(JammiValidationError) as info:
        build()
    message = str(info.value)
    assert "Fix:" in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message
