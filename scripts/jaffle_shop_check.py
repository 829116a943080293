"""`make jaffle-shop-check JAFFLE_SHOP=<checkout>`: dbt-labs' jaffle_shop as published,
then switched to mutable tables, on an embedded session (docs/testing.md, "jaffle_shop").

The checkout (``git clone https://github.com/dbt-labs/jaffle_shop``) is copied to a
temporary directory and left as it is. The copy gets a profile of ``type: jammi`` whose
session builds Hive-format tables, as Spark 3.5's does by default
(``spark.sql.legacy.createHiveTableByDefault``), and then:

1. ``dbt seed`` and ``dbt build`` as published (``table`` and ``view`` models);
2. ``customers`` and ``orders`` switched to ``mutable_table``, keyed by the columns of
   their own ``unique`` tests, and ``dbt build`` twice: the first adopts the two Hive
   tables, the second must change nothing.

Every build must pass every node, and the switched builds' mutable tables must report
``INSERT 0, UPDATE 0, DELETE 0`` (their output equals the stored rows). Prints each
build's counts; exits 1 when one does not hold. Not in CI (the checkout is on GitHub,
which the CI machines do not reach).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DBT = REPO / ".venv" / "bin" / "dbt"

PROFILE = """jaffle_shop:
  target: dev
  outputs:
    dev:
      type: jammi
      method: session
      schema: jaffle
      host: localhost
      threads: 1
      session_dir: {session_dir}
      server_side_parameters:
        spark.sql.legacy.createHiveTableByDefault: "true"
"""

PUBLISHED = """      staging:
        materialized: view"""
SWITCHED = """      customers:
        materialized: mutable_table
        primary_key: [customer_id]
      orders:
        materialized: mutable_table
        primary_key: [order_id]
      staging:
        materialized: view"""

DONE = re.compile(r"Done\. PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)")
MUTABLE = re.compile(
    r"OK created sql mutable_table model (\S+) .*\[\S*?(INSERT \d+, UPDATE \d+, DELETE \d+)"
)


def dbt(project: Path, *args: str) -> str:
    done = subprocess.run(
        [str(DBT), *args, "--profiles-dir", str(project), "--project-dir", str(project)],
        capture_output=True,
        text=True,
        cwd=project,
    )
    return done.stdout + done.stderr


def counts(label: str, output: str) -> tuple[bool, str]:
    found = DONE.search(output)
    if not found:
        return False, f"{label}: no summary line\n{output[-2000:]}"
    passed, warned, errors, skipped = (int(n) for n in found.groups())
    changes = [f"{m.group(1)} {m.group(2)}" for m in MUTABLE.finditer(output)]
    line = f"{label}: PASS={passed} WARN={warned} ERROR={errors} SKIP={skipped}"
    if changes:
        line += " | " + "; ".join(changes)
    return errors == 0 and skipped == 0 and passed > 0, line


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "dbt_project.yml").is_file():
        print("usage: python scripts/jaffle_shop_check.py <jaffle_shop checkout>")
        return 2
    work = Path(tempfile.mkdtemp(prefix="jaffle_shop_"))
    project = work / "jaffle_shop"
    shutil.copytree(argv[0], project, ignore=shutil.ignore_patterns(".git", "target", "logs"))
    (project / "profiles.yml").write_text(PROFILE.format(session_dir=work / "spark"))
    os.environ.setdefault("PYTHONPATH", str(REPO))
    results = [
        counts("seed", dbt(project, "seed")),
        counts("published build", dbt(project, "build")),
    ]
    config = project / "dbt_project.yml"
    text = config.read_text()
    if PUBLISHED not in text:
        print("the checkout's dbt_project.yml is not the published one (no staging block)")
        return 2
    config.write_text(text.replace(PUBLISHED, SWITCHED))
    for label in ("switched build 1", "switched build 2"):
        results.append(counts(label, dbt(project, "build")))
    for ok, line in results:
        print(("ok    " if ok else "FAIL  ") + line)
    second = results[-1][1]
    unchanged = second.count("INSERT 0, UPDATE 0, DELETE 0") == 2
    if not unchanged:
        print("FAIL  the second switched build changed a mutable table")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(ok for ok, _ in results) and unchanged else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
