"""An Iceberg catalog service for the Iceberg lane: Iceberg's REST catalog server over a
JDBC catalog, the topology users of Polaris, Glue, S3 Tables, Nessie or Unity run.

The server is Iceberg's reference one, ``org.apache.iceberg.rest.RESTCatalogServer``,
from Maven Central (``org.apache.iceberg:iceberg-open-api:<SERVER_VERSION>:test-fixtures``;
the servlet it mounts is in ``iceberg-core``'s test jar), backed by Iceberg's
``JdbcCatalog`` on a SQLite file: each commit is one compare-and-swap of the table's
metadata location in that database, so racing writers serialize in the catalog, not in
Spark. Spark reaches it as the session's default catalog (docs/formats.md, "An Iceberg
catalog service")::

    python scripts/iceberg_rest_catalog.py classpath       # resolve the server (mvn)
    python scripts/iceberg_rest_catalog.py run -- CMD ...  # serve on a free port, run CMD

``run`` sets JAMMI_ICEBERG_REST_URI for CMD (tests/conftest.py then configures the
sessions with ``rest_catalog_confs``) and stops the server after it. The server's jars
are resolved by ``mvn dependency:build-classpath`` into the local Maven repository and
listed in ``.jars/iceberg-rest-<version>/classpath.txt``; Hadoop's client comes from
PySpark's own jars.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The newest server Maven Central serves (1.12.0's test fixtures are not published); it
# speaks the same REST protocol as the 1.12.0 Spark runtime the sessions load.
SERVER_VERSION = "1.11.0"
SERVER_CLASS = "org.apache.iceberg.rest.RESTCatalogServer"
CATALOG_NAME = "jammi_rest"
URI_VARIABLE = "JAMMI_ICEBERG_REST_URI"
ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
START_TIMEOUT_S = 120

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dbt-jammi</groupId><artifactId>iceberg-rest-catalog</artifactId><version>1</version>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
DEPENDENCIES = (
    ("org.apache.iceberg", "iceberg-open-api", "{v}", "test-fixtures"),
    ("org.apache.iceberg", "iceberg-core", "{v}", None),
    ("org.apache.iceberg", "iceberg-core", "{v}", "tests"),
    # the server's Jetty (12.1 from Iceberg 1.11 on): servlets, and gzip for its responses
    ("org.eclipse.jetty.ee10", "jetty-ee10-servlet", "12.1.14", None),
    ("org.eclipse.jetty.compression", "jetty-compression-server", "12.1.14", None),
    ("org.eclipse.jetty.compression", "jetty-compression-gzip", "12.1.14", None),
    ("org.xerial", "sqlite-jdbc", "3.49.1.0", None),
    ("commons-logging", "commons-logging", "1.2", None),
    ("org.slf4j", "slf4j-simple", "2.0.17", None),
)


def rest_catalog_confs(uri: str) -> dict[str, str]:
    """A Spark session's settings for the catalog service at ``uri`` as its default
    catalog: ``schema.table`` resolves there, as in production REST catalog setups."""
    return {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        f"spark.sql.catalog.{CATALOG_NAME}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG_NAME}.type": "rest",
        f"spark.sql.catalog.{CATALOG_NAME}.uri": uri,
        "spark.sql.defaultCatalog": CATALOG_NAME,
    }


def server_dir() -> Path:
    return REPO / ".jars" / f"iceberg-rest-{SERVER_VERSION}"


def _pom() -> str:
    lines = []
    for group, artifact, version, classifier in DEPENDENCIES:
        extra = f"<classifier>{classifier}</classifier>" if classifier else ""
        lines.append(
            f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version.format(v=SERVER_VERSION)}</version>{extra}</dependency>"
        )
    return POM.format(dependencies="\n".join(lines))


def hadoop_client_jars() -> list[str]:
    """Hadoop's shaded client from PySpark's jars (the JDBC catalog's file IO)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(str(j) for j in jars.glob("hadoop-client-*.jar"))
    if not found:
        raise SystemExit(f"iceberg rest catalog: no hadoop-client jars under {jars}")
    return found


def classpath() -> list[str]:
    """The server's jars, resolved once by Maven (SystemExit with one line on failure)."""
    folder = server_dir()
    listed = folder / "classpath.txt"
    pom = _pom()
    if not (listed.is_file() and (folder / "pom.xml").read_text() == pom):
        if shutil.which("mvn") is None:
            raise SystemExit("iceberg rest catalog: `mvn` is not on PATH (it fetches the server)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pom.xml").write_text(pom)
        log = folder / "mvn.log"
        with log.open("w") as out:
            code = subprocess.call(
                [
                    "mvn",
                    "-B",
                    "-q",
                    "-f",
                    str(folder / "pom.xml"),
                    "dependency:build-classpath",
                    f"-Dmdep.outputFile={listed}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        if code != 0 or not listed.is_file():
            raise SystemExit(
                f"iceberg rest catalog: Maven could not fetch the server "
                f"(org.apache.iceberg:iceberg-open-api:{SERVER_VERSION}:test-fixtures and its "
                f"dependencies); Maven's output is in {log}"
            )
    jars = [j for j in listed.read_text().strip().split(os.pathsep) if j]
    return jars + hadoop_client_jars()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(uri: str) -> bool:
    try:
        with urllib.request.urlopen(uri + "v1/config", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def create_namespace(uri: str, namespace: str) -> None:
    """Create ``namespace`` in the catalog (Iceberg's REST protocol); one that exists is
    left as it is. A Thrift or Connect server opens each session in ``default`` of its
    default catalog, so a server whose default catalog is this one needs that namespace."""
    body = json.dumps({"namespace": [namespace], "properties": {}}).encode()
    request = urllib.request.Request(
        uri + "v1/namespaces", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10):
            return
    except urllib.error.HTTPError as error:
        if error.code != 409:  # 409: it exists
            raise


@contextlib.contextmanager
def serving(state: Path) -> Iterator[str]:
    """A server over a JDBC catalog in ``state`` (its SQLite file and warehouse) for the
    block; yields its URI."""
    port = _free_port()
    uri = f"http://127.0.0.1:{port}/"
    env = dict(
        os.environ,
        CATALOG_WAREHOUSE=f"file:{state / 'warehouse'}",
        CATALOG_URI=f"jdbc:sqlite:file:{state / 'catalog.db'}",
        CATALOG_JDBC_SCHEMA__VERSION="V1",
        CATALOG_REST_PORT=str(port),
    )
    (state / "warehouse").mkdir(parents=True, exist_ok=True)
    log = (state / "server.log").open("w")
    server = subprocess.Popen(
        ["java", "-Xmx512m", "-cp", os.pathsep.join(classpath()), SERVER_CLASS],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _ready(uri):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (state / "server.log").read_text()[-600:]
                raise SystemExit(f"iceberg rest catalog: the server did not start:\n{tail}")
            time.sleep(0.5)
        yield uri
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def main(argv: list[str]) -> int:
    if argv[:1] == ["classpath"]:
        print(os.pathsep.join(classpath()))
        return 0
    if argv[:1] != ["run"] or "--" not in argv:
        print(__doc__)
        return 2
    command = argv[argv.index("--") + 1 :]
    with tempfile.TemporaryDirectory(prefix="jammi-rest-") as state:
        with serving(Path(state)) as uri:
            print(f"iceberg rest catalog: {SERVER_CLASS} {SERVER_VERSION} at {uri}", flush=True)
            return subprocess.call(command, env=dict(os.environ, **{URI_VARIABLE: uri}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
