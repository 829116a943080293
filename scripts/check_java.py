"""Exit with a one-line message when Java 17+ is missing (no stack trace)."""

import sys

from dbt.adapters.jammi.engine.session import java_problem

problem = java_problem()
if problem:
    print(problem, file=sys.stderr)
    sys.exit(1)
