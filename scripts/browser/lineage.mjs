// Open a dbt docs site in headless Chromium, show one model's lineage graph, and print
// what the page rendered (the graph's nodes and edges, read from the live page) as JSON.
// Called by scripts/docs_lineage_check.py, which makes the assertions.
//
// usage: node lineage.mjs <site-url> <model-unique-id> <screenshot.png> <user-data-dir>
import { chromium } from "playwright-core";

const [siteUrl, uniqueId, screenshotPath, userDataDir] = process.argv.slice(2);
const executablePath = process.env.JAMMI_CHROMIUM || "/usr/bin/chromium";

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  viewport: { width: 1600, height: 1000 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});

try {
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors = [];
  page.on("pageerror", (err) => consoleErrors.push(String(err)));

  // 1. The model's documentation page.
  await page.goto(`${siteUrl}/#!/model/${uniqueId}`, { waitUntil: "load" });
  await page.waitForFunction(
    (id) => document.body.innerText.includes(id.split(".").pop()),
    uniqueId,
    { timeout: 60000 },
  );

  // 2. The lineage launcher (bottom right), then "expand" to the full-screen graph of
  //    +model+ (every ancestor and descendant), as a user would.
  await page.click('[ng-click="onLauncherClick()"]', { timeout: 30000 });
  await page.waitForFunction(() => window.graph && window.graph.nodes().length > 0, null, {
    timeout: 60000,
  });
  await page.click('[ng-click="showExpanded()"]', { timeout: 30000 });
  await page.waitForFunction(
    (id) => {
      const g = window.graph;
      const node = g && g.getElementById(id);
      return node && node.length === 1 && node.visible() && g.edges().length > 0;
    },
    uniqueId,
    { timeout: 60000 },
  );
  await page.mouse.move(5, 500); // no tooltip over the graph
  await page.waitForTimeout(1500); // let the layout animation settle before the screenshot

  // 3. What the page rendered: cytoscape's live graph plus the selector the UI shows.
  const rendered = await page.evaluate(() => {
    const g = window.graph;
    const viewport = { w: g.width(), h: g.height() };
    const nodes = g.nodes().map((n) => {
      const box = n.renderedBoundingBox();
      return {
        id: n.id(),
        label: n.data("label"),
        visible: n.visible(),
        in_viewport: box.x2 > 0 && box.y2 > 0 && box.x1 < viewport.w && box.y1 < viewport.h,
        selected: n.selected() || n.data("selected") === 1,
      };
    });
    const edges = g.edges().map((e) => ({
      source: e.source().id(),
      target: e.target().id(),
      visible: e.visible(),
    }));
    const selector = Array.from(document.querySelectorAll("input"))
      .map((i) => i.value)
      .filter((v) => v && v.includes("+"));
    return { url: location.href, nodes, edges, selector };
  });
  rendered.console_errors = consoleErrors;

  await page.screenshot({ path: screenshotPath });
  process.stdout.write(JSON.stringify(rendered));
} finally {
  await context.close();
}
