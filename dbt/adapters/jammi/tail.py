"""Compatibility entry point: ``python -m`` on this module runs the live tail, which lives
in topic/tail.py (``follow`` is importable from here too)."""

from __future__ import annotations

import sys

from dbt.adapters.jammi.topic.tail import follow, main

__all__ = ["follow", "main"]

if __name__ == "__main__":
    sys.exit(main())
