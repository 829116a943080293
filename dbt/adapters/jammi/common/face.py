"""How the adapter's face (impl.py) hands a Jinja call to a service.

``hands_to("_run", MutableRunService.run_start)`` is a method Jinja may call
(``available``) whose whole body is the service's method on the adapter's instance of
that service: its signature and docstring are the service method's (``functools.wraps``),
so the face lists every name Jinja may call, and where each goes, one line apiece. The
call is looked up on the instance by name, so a test may give the adapter a fake service.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from dbt.adapters.base import available


def hands_to(service: str, method: Callable[..., Any], parse_none: bool = False) -> Any:
    """A face method for ``method`` of the service the adapter holds as ``service``.
    ``parse_none``: while dbt parses, the call returns None without running
    (``available.parse_none``)."""
    name = method.__name__

    @functools.wraps(method)
    def face(adapter: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(getattr(adapter, service), name)(*args, **kwargs)

    return available.parse_none(face) if parse_none else available(face)
