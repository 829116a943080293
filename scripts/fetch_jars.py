"""`make jars`: the Spark-side jars from Maven Central, the way users get them.

For every release of dbt/adapters/jammi/engine/jar_releases.py with a ``jars_dir``
(Delta and Iceberg, one per Spark line, and Spark 3.5's Connect server):
1. ``mvn dependency:get`` of its Maven coordinates (with their dependencies, unless the
   release takes its own jar only) into the local Maven repository, ~/.m2/repository:
   the repository Spark's ``spark.jars.packages`` resolver reads before any remote one
   (``local-m2-cache``), so a session configured by coordinates downloads nothing more;
2. its jars copied from there into ``.jars/<jars_dir>/`` (git-ignored) for what takes
   jar files: ``spark.jars`` and spark-submit's ``--jars`` (the Thrift Delta lane).

A release whose jars are all in both places is skipped without starting Maven, so the
jars come over the network once. A fetch that fails stops with one line naming the
artifact (Maven's own output is in .jars/mvn.log).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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


def fetch(release: JarRelease, log: Path) -> None:
    for coordinates in release.jars:
        if not local_repository_jar(coordinates).is_file():
            maven_get(coordinates, log, release.with_dependencies)
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
