import { dirname } from "node:path";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import { chromiumSkip as skip, launchChromium } from "../support/browser.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { inRepo } from "../support/repo.js";

/**
 * The /docs page in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
 * Swagger UI renders every operation of /openapi.json with no script or CSP error. A
 * screenshot goes to test-output/docs-page.png. `.ci/run` installs chromium and sets
 * REQUIRE_CHROMIUM=1, so that in CI its absence fails instead of skipping.
 */
const SCREENSHOT = inRepo("test-output/docs-page.png");
const document = JSON.parse(readFileSync(inRepo("gen/openapi.json"), "utf8")) as { paths: Record<string, Record<string, { summary: string }>> };
const operations = Object.values(document.paths).flatMap((item) => Object.entries(item));

let server: TestServer;
let browser: Browser;
before(async () => {
  if (skip) return;
  server = await startTestServer();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test("/docs renders every operation of the OpenAPI document in Chromium", { skip, timeout: 120_000 }, async (t) => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  const response = await page.goto(`${server.apiUrl}/docs`);
  assert.equal(response?.status(), 200);
  assert.equal(await page.title(), "Platform API");
  await page.waitForSelector(".opblock", { timeout: 60_000 });
  assert.deepEqual(problems, [], "no script or console error while rendering");
  // Swagger UI renders only the operations near the viewport (and fewer after scrolling): the
  // whole document is checked in its own state, the page for what it shows first.
  const known = await page.evaluate(() => (window as unknown as { ui: { specSelectors: { operations(): { size: number } } } }).ui.specSelectors.operations().size);
  assert.equal(known, operations.length);
  assert.ok((await page.locator(".opblock-get").count()) > 0);
  const summaries = await page.locator(".opblock-summary-path").allInnerTexts();
  assert.ok(summaries.some((s) => s.replace(/\u200b/g, "").includes("/iam/v2/groups/{uid}")), summaries.slice(0, 5).join(" | "));
  assert.match(await page.locator(".info .title").innerText(), /Platform API/);
  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT });
  t.diagnostic(`screenshot: ${SCREENSHOT}`);
  assert.deepEqual(problems, []);
});

test("/docs \"Try it out\" reaches a resource whose uid holds a `/`, with a token given to Authorize", { skip, timeout: 120_000 }, async () => {
  const headers = { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" };
  const made = await fetch(`${server.apiUrl}/iam/v2/groups/${server.org.uid}`, { method: "POST", headers, body: JSON.stringify({ name: "try-it-out" }) });
  const child = ((await made.json()) as { uid: string }).uid;
  assert.match(child, /\//);
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  await page.goto(`${server.apiUrl}/docs`);
  await page.waitForSelector(".opblock", { timeout: 60_000 });
  await page.locator(".btn.authorize").first().click();
  await page.locator(".modal-ux input[type=text], .modal-ux input[type=password]").first().fill(server.ownerToken);
  await page.locator(".modal-ux button.authorize").first().click();
  await page.locator(".modal-ux button.btn-done").first().click();
  const operation = page.locator(".opblock-get", { hasText: "/iam/v2/groups/{uid}" }).first();
  await operation.locator(".opblock-summary").click();
  await operation.locator("button.try-out__btn").click();
  await operation.locator("input[placeholder=uid]").fill(child);
  const answered = page.waitForResponse((res) => res.url().includes("/iam/v2/groups/") && res.request().method() === "GET");
  await operation.locator("button.execute").click();
  const response = await answered;
  assert.equal(response.status(), 200, await response.text());
  assert.equal(((await response.json()) as { uid: string }).uid, child);
});
