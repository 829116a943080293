"""Check the dbt docs site in a real browser: a topic's lineage shows publisher and consumers.

Steps (`make docs-browser`):
1. `dbt build` + `dbt docs generate` for the integration project, into a temporary target
   path (and, for the embedded session, a temporary Spark state directory), so it never
   touches anyone's integration_project/target or .spark.
2. Serve the generated site on a free loopback port (python http.server).
3. Open it in headless Chromium (Debian package `chromium`, installed with apt-get when
   missing), driven by playwright-core from scripts/browser/ (npm, no browser download):
   the topic model's page -> lineage launcher -> full-screen graph of +topic+.
4. Assert against the graph the page rendered (cytoscape's live nodes and edges): the
   topic node, every upstream node that publishes into it, and every downstream consumer
   are visible, with the edges between them. Expected neighbours come from the manifest.
5. Save a screenshot to docs/images/lineage_cdc_orders.png.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
BROWSER_DIR = REPO_ROOT / "scripts" / "browser"
CHROMIUM = os.environ.get("JAMMI_CHROMIUM", "/usr/bin/chromium")
# Resource types the docs lineage graph draws (tests and macros are not drawn).
GRAPH_TYPES = {"model", "seed", "snapshot", "source", "exposure", "metric", "semantic_model"}


class CheckFailed(Exception):
    pass


def log(message: str) -> None:
    print(f"docs-browser: {message}", flush=True)


def ensure_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise CheckFailed(
            f"{CHROMIUM} not found; install Chromium (Debian: `apt-get install -y chromium`) "
            "or point JAMMI_CHROMIUM at a Chromium/Chrome binary"
        )
    log("installing the Debian package `chromium` (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, env=env)


def ensure_playwright_core() -> None:
    if (BROWSER_DIR / "node_modules" / "playwright-core").is_dir():
        return
    if shutil.which("npm") is None:
        raise CheckFailed("npm not found; install Node.js 18+ to drive the browser")
    log("installing playwright-core into scripts/browser/ (npm ci; no browser download)")
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BROWSER_DIR, check=True, env=env)


def run_dbt(args: argparse.Namespace, target_path: Path, log_path: Path) -> None:
    dbt = str(Path(sys.executable).parent / "dbt")
    common = [
        "--profiles-dir",
        str(args.project_dir),
        "--project-dir",
        str(args.project_dir),
        "--target-path",
        str(target_path),
        "--log-path",
        str(log_path),
    ]
    if args.target:
        common += ["--target", args.target]
    commands = [] if args.skip_build else [["build", *common]]
    commands.append(["docs", "generate", *common])
    for command in commands:
        started = time.monotonic()
        log(f"dbt {' '.join(command[:2] if command[0] == 'docs' else command[:1])} ...")
        result = subprocess.run([dbt, *command], capture_output=True, text=True)
        tail = "\n".join(result.stdout.splitlines()[-12:])
        log(f"  exit {result.returncode} in {time.monotonic() - started:.0f}s\n{tail}")
        if result.returncode != 0:
            raise CheckFailed(f"`dbt {' '.join(command[:2])}` failed")


def find_topic(manifest: dict[str, Any], topic: str) -> str:
    """unique_id of the model that publishes `topic` (config topic_name, else model name)."""
    by_config = [
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "model" and node["config"].get("topic_name") == topic
    ]
    if by_config:
        return sorted(by_config)[0]
    derived = topic.replace(".", "_")
    by_name = [
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "model"
        and node["name"] == derived
        and node["config"].get("materialized") == "topic"
    ]
    if by_name:
        return by_name[0]
    topics = sorted(
        f"{n['name']} ({n['config'].get('topic_name') or 'topic_name not set'})"
        for n in manifest["nodes"].values()
        if n["config"].get("materialized") == "topic"
    )
    raise CheckFailed(
        f"no model publishes topic {topic!r} in the manifest; topic models: {topics or 'none'}"
    )


def graph_neighbours(manifest: dict[str, Any], uid: str, key: str) -> list[str]:
    def resource_type(node_id: str) -> str:
        return node_id.split(".", 1)[0]

    return sorted(n for n in manifest[key].get(uid, []) if resource_type(n) in GRAPH_TYPES)


@functools.lru_cache(maxsize=1)
def _quiet_handler() -> type:
    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return QuietHandler


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_quiet_handler(), directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def render_lineage(url: str, uid: str, screenshot: Path, user_data_dir: Path) -> dict[str, Any]:
    command = ["node", str(BROWSER_DIR / "lineage.mjs"), url, uid, str(screenshot)]
    command.append(str(user_data_dir))
    env = dict(os.environ, JAMMI_CHROMIUM=CHROMIUM)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    if result.returncode != 0:
        raise CheckFailed(f"the browser run failed:\n{result.stderr[-2000:]}")
    rendered: dict[str, Any] = json.loads(result.stdout)
    return rendered


def check_lineage(
    rendered: dict[str, Any], uid: str, publishers: list[str], consumers: list[str]
) -> tuple[list[str], list[str]]:
    """Checks against the rendered graph: (what it verified, what is wrong)."""
    nodes = {n["id"]: n for n in rendered["nodes"]}
    edges = {(e["source"], e["target"]) for e in rendered["edges"] if e["visible"]}
    problems: list[str] = []
    verified: list[str] = []

    def shown(node_id: str, role: str) -> None:
        node = nodes.get(node_id)
        if node is None:
            problems.append(f"{role} {node_id} is not in the rendered graph")
        elif not (node["visible"] and node["in_viewport"]):
            problems.append(f"{role} {node_id} is rendered but not visible on screen")
        else:
            verified.append(f"{role:<9} {node['label']:<32} visible ({node_id})")

    if not publishers:
        problems.append(f"{uid} has no upstream (publisher) node in the manifest")
    if not consumers:
        problems.append(f"{uid} has no downstream (consumer) node in the manifest")
    shown(uid, "topic")
    for parent in publishers:
        shown(parent, "publisher")
        if (parent, uid) in edges:
            verified.append(f"edge      {parent} -> {uid}")
        else:
            problems.append(f"no rendered edge {parent} -> {uid}")
    for child in consumers:
        shown(child, "consumer")
        if (uid, child) in edges:
            verified.append(f"edge      {uid} -> {child}")
        else:
            problems.append(f"no rendered edge {uid} -> {child}")
    return verified, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project-dir", type=Path, default=REPO_ROOT / "integration_project")
    parser.add_argument("--target", default=None, help="profile target (default: the profile's)")
    parser.add_argument("--topic", default="cdc.orders", help="topic name to check")
    parser.add_argument(
        "--screenshot", type=Path, default=REPO_ROOT / "docs" / "images" / "lineage_cdc_orders.png"
    )
    parser.add_argument("--skip-build", action="store_true", help="only `dbt docs generate`")
    args = parser.parse_args(argv)
    args.project_dir = args.project_dir.resolve()

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="jammi-docs-browser-"))
    os.environ.setdefault("JAMMI_SESSION_DIR", str(work / "spark"))
    try:
        ensure_chromium()
        ensure_playwright_core()
        target_path = work / "target"
        run_dbt(args, target_path, work / "logs")
        manifest = json.loads((target_path / "manifest.json").read_text())
        uid = find_topic(manifest, args.topic)
        publishers = graph_neighbours(manifest, uid, "parent_map")
        consumers = graph_neighbours(manifest, uid, "child_map")
        log(f"topic {args.topic!r} is {uid}")
        log(f"manifest: publishers {publishers}, consumers {consumers}")

        server = serve(target_path)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            shot = work / "lineage.png"
            log(f"serving {target_path} at {url}; opening headless {CHROMIUM}")
            rendered = render_lineage(url, uid, shot, work / "chromium-profile")
        finally:
            server.shutdown()
            server.server_close()
        log(f"page {rendered['url']}")
        log(
            f"rendered graph: {len(rendered['nodes'])} nodes, {len(rendered['edges'])} edges, "
            f"selector {rendered['selector']}"
        )
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, args.screenshot)
        log(f"screenshot saved to {args.screenshot}")
        verified, problems = check_lineage(rendered, uid, publishers, consumers)
        for line in verified:
            log(f"  ok {line}")
        if problems:
            raise CheckFailed("lineage assertion failed:\n  " + "\n  ".join(problems))
    except CheckFailed as exc:
        log(f"FAILED: {exc}")
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"PASSED in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
