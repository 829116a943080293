"""`make jars`: the Spark-side jars from Maven Central, the way users get them.

For every release of dbt/adapters/jammi/engine/jar_releases.py with a ``jars_dir``
(Delta and Iceberg, one per Spark line, and Spark 3.5's Connect server):
1. ``mvn dependency:get`` of its Maven coordinates (with their dependencies, unless the
   release takes its own jar only) into the local Maven repository, ~/.m2/repository:
   the repository Spark's ``spark.jars.packages`` resolver reads before any remote one
   (``local-m2-cache``), so a session configured by coordinates downloads nothing more;
2. its jars copied from there into ``.jars/<jars_dir>/`` (git-ignored) for what takes
   jar files: ``spark.jars`` and spark-submit's ``--jars`` (the Thrift Delta lane).

Spark's resolver is Ivy, which takes the newest version of a module that several
dependencies ask for, where Maven takes the nearest: Maven then leaves only the pom of
the version Ivy picks in the local repository (Delta 4.3.1's slf4j-api 2.0.13 and
commons-logging 1.3.0), and Ivy, finding that pom there, fails on its missing jar
instead of fetching it. So after Maven, a release resolved by coordinates is resolved
as a session would (``spark-submit --packages`` with an empty Ivy cache, running no
application), and each jar Ivy could not find is fetched with Maven, until Ivy resolves
the package whole.

A release whose jars are all in both places is skipped without starting Maven, so the
jars come over the network once. A fetch that fails stops with one line naming the
artifact (Maven's own output is in .jars/mvn.log).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dbt.adapters.jammi.engine.jar_releases import FETCHED_RELEASES, JarRelease

REPO = Path(__file__).resolve().parent.parent
JARS_CACHE = REPO / ".jars"
# Spark's resolver reads this path whatever Maven's settings.xml says, so Maven is told
# to fill it.
LOCAL_MAVEN_REPOSITORY = Path.home() / ".m2" / "repository"


def local_repository_jar(coordinates: str) -> Path:
    """Where Maven keeps ``group:artifact:version``'s jar in the local repository."""
    group, artifact, version = coordinates.split(":")
    folder = LOCAL_MAVEN_REPOSITORY.joinpath(*group.split("."), artifact, version)
    return folder / f"{artifact}-{version}.jar"


def jars_dir(release: JarRelease) -> Path:
    """``.jars/<jars_dir>``, the folder of plain jars for ``spark.jars``."""
    return JARS_CACHE / str(release.jars_dir)


def cached_jar(release: JarRelease, coordinates: str) -> Path:
    return jars_dir(release) / local_repository_jar(coordinates).name


def is_cached(release: JarRelease) -> bool:
    return all(
        local_repository_jar(c).is_file() and local_repository_jar(c).with_suffix(".pom").is_file()
        for c in release.jars
    ) and all(cached_jar(release, c).is_file() for c in release.jars)


def maven_get(coordinates: str, log: Path, with_dependencies: bool = True) -> None:
    """``mvn dependency:get`` (of the jar alone unless ``with_dependencies``) into
    LOCAL_MAVEN_REPOSITORY; SystemExit naming the artifact when Maven fails."""
    if shutil.which("mvn") is None:
        raise SystemExit(f"make jars: cannot fetch {coordinates}: `mvn` is not on PATH")
    command = [
        "mvn",
        "--batch-mode",
        "--quiet",
        f"-Dmaven.repo.local={LOCAL_MAVEN_REPOSITORY}",
        "dependency:get",
        f"-Dartifact={coordinates}",
        f"-Dtransitive={'true' if with_dependencies else 'false'}",
    ]
    print(f"jars: fetching {coordinates} with mvn ...", flush=True)
    with open(log, "ab") as sink:
        sink.write(f"\n$ {' '.join(command)}\n".encode())
        sink.flush()
        code = subprocess.call(command, stdout=sink, stderr=subprocess.STDOUT)
    if code != 0:
        raise SystemExit(
            f"make jars: could not fetch {coordinates} from Maven Central "
            f"(mvn dependency:get exited {code}; its output: {log})"
        )


# What Spark's Ivy prints for a jar it could not fetch: "download failed:
# org.slf4j#slf4j-api;2.0.13!slf4j-api.jar".
_IVY_MISSING = re.compile(r"download failed: ([^#\s]+)#([^;\s]+);([^!\s]+)!")
IVY_ROUNDS = 5


def ivy_missing(output: str) -> list[str]:
    """The ``group:artifact:version`` of each jar Spark's Ivy reported missing."""
    return sorted({f"{g}:{a}:{v}" for g, a, v in _IVY_MISSING.findall(output)})


def ivy_resolve(package: str, log: Path) -> list[str]:
    """Resolve ``package`` as ``spark.jars.packages`` does, with a fresh Ivy cache: the
    jars Ivy could not fetch (empty when it resolved whole)."""
    from pyspark import find_spark_home

    submit = Path(find_spark_home._find_spark_home()) / "bin" / "spark-submit"
    with tempfile.TemporaryDirectory() as work:
        app = Path(work) / "resolved.py"
        app.write_text("")  # resolution happens before the application; none runs
        command = [str(submit), "--conf", f"spark.jars.ivy={work}/ivy", "--packages", package]
        done = subprocess.run(
            [*command, str(app)],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYSPARK_PYTHON=sys.executable),
        )
    with open(log, "a") as sink:
        sink.write(f"\n$ {' '.join(command)} (exit {done.returncode})\n{done.stderr[-4000:]}")
    missing = ivy_missing(done.stdout + done.stderr)
    if done.returncode != 0 and not missing:
        raise SystemExit(
            f"make jars: Spark could not resolve {package} (spark-submit exited "
            f"{done.returncode}; its output: {log})"
        )
    return missing


def fetch(release: JarRelease, log: Path) -> None:
    for coordinates in release.jars:
        if not local_repository_jar(coordinates).is_file():
            maven_get(coordinates, log, release.with_dependencies)
    if release.with_dependencies:
        for _ in range(IVY_ROUNDS):
            missing = ivy_resolve(release.package, log)
            if not missing:
                break
            for coordinates in missing:
                maven_get(coordinates, log, with_dependencies=False)
        else:
            raise SystemExit(
                f"make jars: Spark still cannot resolve {release.package} after fetching "
                f"what it lacked {IVY_ROUNDS} times (its output: {log})"
            )
    folder = jars_dir(release)
    folder.mkdir(parents=True, exist_ok=True)
    for coordinates in release.jars:
        shutil.copy2(local_repository_jar(coordinates), cached_jar(release, coordinates))


def main() -> int:
    JARS_CACHE.mkdir(exist_ok=True)
    log = JARS_CACHE / "mvn.log"
    for release in FETCHED_RELEASES:
        if is_cached(release):
            print(f"jars: {release.package} (cached in .jars/{release.jars_dir})")
            continue
        fetch(release, log)
        print(f"jars: {release.package} -> .jars/{release.jars_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
