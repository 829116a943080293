"""The embedded Spark session: where it keeps its state, and what it can do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from dbt.include import jammi as jammi_include
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.sql_session import DEFAULT_CATALOG, default_catalog_name
from dbt.adapters.jammi.credentials import (
    LAUNCH_DEFAULTS,
    SESSION_SQL_DEFAULTS,
    JammiCredentials,
)

MIN_JAVA = 17
JAVA_HELP = (
    "dbt-jammi's embedded Spark session needs Java {min} or newer ({found}). "
    "Install a JDK 17, e.g. `apt-get install openjdk-17-jre-headless` or "
    "https://adoptium.net, and make sure `java` is on PATH or JAVA_HOME is set."
)


def _java_binary() -> Optional[str]:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


@lru_cache(maxsize=1)
def java_problem() -> Optional[str]:
    """None when a usable Java is installed, else a one-line message saying what to do."""
    java = _java_binary()
    if java is None:
        return JAVA_HELP.format(min=MIN_JAVA, found="no `java` found")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError) as exc:
        return JAVA_HELP.format(min=MIN_JAVA, found=f"`{java} -version` failed: {exc}")
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return JAVA_HELP.format(min=MIN_JAVA, found=f"cannot read the version of {java}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # 1.8 style
        major = int(match.group(2))
    if major < MIN_JAVA:
        return JAVA_HELP.format(min=MIN_JAVA, found=f"found Java {major} at {java}")
    return None


def apply_session_defaults(credentials: JammiCredentials, project_root: Optional[str]) -> None:
    """Place the embedded session's metastore and warehouse inside the project directory
    (not the caller's working directory), unless the profile says otherwise."""
    if not credentials.is_session:
        return
    root = project_root or os.getcwd()
    state = credentials.session_dir or ".spark"
    if not os.path.isabs(state):
        state = os.path.join(root, state)
    state = os.path.abspath(state)
    params = credentials.server_side_parameters
    params.setdefault("spark.sql.warehouse.dir", os.path.join(state, "warehouse"))
    params.setdefault(
        "spark.hadoop.javax.jdo.option.ConnectionURL",
        f"jdbc:derby:;databaseName={os.path.join(state, 'metastore_db')};create=true",
    )
    log_config = os.path.join(os.path.dirname(jammi_include.__file__), "log4j2.properties")
    params["spark.driver.extraJavaOptions"] = driver_java_options(
        params.get("spark.driver.extraJavaOptions", ""),
        {"derby.system.home": state, "log4j2.configurationFile": f"file:{log_config}"},
    )
    for key, value in LAUNCH_DEFAULTS.items():
        params.setdefault(key, value)


def driver_java_options(given: str, properties: dict[str, str]) -> str:
    """The driver JVM's options: the profile's own (``given``, e.g. a heap or GC flag)
    plus each of ``properties`` as ``-Dkey=value`` unless the profile sets that key."""
    ours = [f"-D{key}={value}" for key, value in properties.items() if f"-D{key}=" not in given]
    return " ".join([*ours, given.strip()]).strip()


_SESSION_START = threading.Lock()


def start_embedded_session(server_side_parameters: dict[str, str]) -> None:
    """Create the process's local Spark session with the SQL defaults set once.

    dbt-spark's cursor calls `SparkSession.builder...getOrCreate()` with the profile's
    `server_side_parameters` before every statement and so re-applies them each time.
    The adapter's own SQL defaults (SESSION_SQL_DEFAULTS) are therefore not put there:
    they are set here, once, on the session this call creates, like spark-defaults.conf,
    so a later `SET` (dbt-spark's `partitionOverwriteMode = DYNAMIC`, a user's hook)
    holds exactly as it does under `type: spark`. A default is skipped when the profile
    or Spark's launcher already set that key, and on a non-local master (spark-submit
    to a cluster): there the cluster's configuration stands. An already running session
    (created by the caller's own program) is left as it is.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    with _SESSION_START:
        if SparkContext._active_spark_context is not None:
            return
        builder = SparkSession.builder.enableHiveSupport()
        for key, value in server_side_parameters.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if not (spark.sparkContext.master or "").startswith("local"):
            return
        context_conf = spark.sparkContext.getConf()
        for key, value in SESSION_SQL_DEFAULTS.items():
            if not context_conf.contains(key):
                spark.conf.set(key, value)


def ensure_java() -> None:
    problem = java_problem()
    if problem:
        raise DbtRuntimeError(problem)


@dataclass(frozen=True)
class SessionCapabilities:
    """What the connected Spark session supports; probed once per connection.

    ``iceberg``: Iceberg's SQL extensions (MERGE INTO, time travel, procedures) are loaded
    *and* the catalog that dbt's ``schema.table`` names resolve in is Iceberg's: the
    session catalog (``spark_catalog``) replaced by Iceberg's SparkSessionCatalog, or the
    session's default catalog (``spark.sql.defaultCatalog``) an Iceberg SparkCatalog, as
    users of a REST catalog configure it (docs/formats.md). ``catalog``: that catalog's
    name, whose procedures (``CALL <catalog>.system...``) the adapter calls."""

    delta: bool
    extensions: str
    iceberg: bool = False
    catalog: str = DEFAULT_CATALOG

    @classmethod
    def from_extensions(
        cls,
        extensions: Optional[str],
        catalog_class: Optional[str] = None,
        catalog: Optional[str] = None,
    ) -> SessionCapabilities:
        """From the session's settings: ``spark.sql.extensions``, the class of the
        default catalog (``spark.sql.catalog.<name>``) and its name
        (``spark.sql.defaultCatalog``, ``spark_catalog`` when unset)."""
        value = "" if extensions in (None, "<undefined>") else str(extensions)
        implementation = "" if catalog_class in (None, "<undefined>") else str(catalog_class)
        return cls(
            delta="DeltaSparkSessionExtension" in value,
            extensions=value,
            iceberg="IcebergSparkSessionExtensions" in value
            and implementation.startswith("org.apache.iceberg.spark."),
            catalog=default_catalog_name(catalog),
        )


CAPABILITIES_ATTR = "_jammi_capabilities"


def cached_capabilities(handle: Any) -> Optional[SessionCapabilities]:
    return getattr(handle, CAPABILITIES_ATTR, None)


def remember_capabilities(handle: Any, capabilities: SessionCapabilities) -> None:
    setattr(handle, CAPABILITIES_ATTR, capabilities)
