import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importOsvFeed } from "../support/osv-import.js";
import { readOsvFeed } from "../../src/engines/advisories/osv/feed.js";
import { importLibraries } from "../../src/domains/libraries/library-import.js";
import { readLibraryFeed } from "../../src/engines/package-feeds/feed.js";
import { freePort, skopeoSkip } from "../support/skopeo.js";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { builtInRole } from "../../src/access/capabilities.js";
import { chromiumSkip, launchChromium } from "../support/browser.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { ROOT } from "../support/repo.js";

/**
 * The console at /console in headless Chromium, against a real server and a real identity
 * provider: sign in through the browser login, join by an invite, walk the organization tree and
 * change it, all through the API's RPCs; axe finds no serious or critical violation on any page.
 */
const execFileAsync = promisify(execFile);

describe("the console", { skip: chromiumSkip }, () => {
  let idp: TestIdp;
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    idp = await startTestIdp();
    const registryPort = await freePort();
    server = await startTestServer({
      apiUrl: "listen",
      registryPort,
      registryUrl: `http://127.0.0.1:${registryPort}`,
      events: { allowLocalSinks: true },
      upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
      login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret" },
    });
    await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [`${server.apiUrl}/auth/v1/callback`], token_endpoint_auth_method: "client_secret_post" });
    idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada" });
    idp.setAccount("vic", { email: "vic@example.com", email_verified: true, name: "Vic" });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await idp?.close();
  });

  async function invite(role: "owner" | "viewer", email: string): Promise<string> {
    const res = await fetch(`${server.apiUrl}/iam/v2/groupInvites/${server.org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ roleUid: builtInRole(role).uid, ttl: "3600s", email }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { code: string }).code;
  }

  /**
   * Axe's verdict on the page; with CONSOLE_SCREENSHOTS=<folder> (`npm run screenshots:console`),
   * also a screenshot of it named for `what`, for docs/console/.
   */
  async function accessible(page: Page, what: string): Promise<void> {
    const folder = process.env.CONSOLE_SCREENSHOTS;
    if (folder) {
      mkdirSync(folder, { recursive: true });
      await page.screenshot({ path: join(folder, `${what.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "")}.png`), fullPage: true });
    }
    const { violations } = await new AxeBuilder({ page }).analyze();
    const grave = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    assert.deepEqual(
      grave.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("; ")})`),
      [],
      `${what}: no serious or critical accessibility violation`,
    );
  }

  const backAtConsole = (url: URL) => url.pathname.startsWith("/console/") && !url.search.includes("code=");

  /**
   * From the console's sign-in button through the provider's form, back to the console. With
   * `remembered`, the provider still has the person's session and asks nothing (single sign-on).
   */
  async function signIn(page: Page, login: string, remembered = false): Promise<void> {
    if (remembered) {
      await Promise.all([page.waitForURL((url) => backAtConsole(url) && url.hash !== ""), page.getByRole("button", { name: "Sign in" }).click()]);
      return;
    }
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.fill("input[name=login]", login);
    await page.fill("input[name=password]", "any password");
    await Promise.all([page.waitForURL(backAtConsole), page.click("button[type=submit]")]);
  }

  test("a person signs in, joins by an invite, and walks and changes the organization tree", { timeout: 120_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    const response = await page.goto(`${server.apiUrl}/console`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()["content-security-policy"] ?? "", /default-src 'self'/);
    await accessible(page, "the sign-in page");
    await signIn(page, "ada");

    await page.getByRole("heading", { name: "Join an organization" }).waitFor();
    await accessible(page, "the join page");
    await page.getByLabel("Invite code").fill(await invite("owner", "ada@example.com"));
    await page.getByRole("button", { name: "Join" }).click();

    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    await accessible(page, "the organizations");
    await page.getByRole("link", { name: "acme" }).click();
    await page.getByRole("heading", { name: "acme" }).waitFor();
    await page.getByLabel("New folder").fill("team-x");
    await page.getByRole("button", { name: "Create folder" }).click();
    await page.getByRole("link", { name: "team-x" }).click();
    await page.getByRole("heading", { name: "team-x" }).waitFor();
    assert.match(await page.getByRole("navigation", { name: "Breadcrumbs" }).innerText(), /Organizations \/ acme \/ team-x/);
    await accessible(page, "a folder");
    await page.getByLabel("Name").fill("team-y");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("heading", { name: "team-y" }).waitFor();

    const listed = await fetch(`${server.apiUrl}/iam/v2/groups?uidp.children_of=${server.org.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
    assert.deepEqual(((await listed.json()) as { groups: Array<{ name: string }> }).groups.map((g) => g.name), ["team-y"], "the change went through the API");

    // A refusal shows its message: a sibling of the same name.
    await page.getByRole("link", { name: "acme" }).click();
    await page.getByLabel("New folder").fill("team-y");
    await page.getByRole("button", { name: "Create folder" }).click();
    await page.getByRole("alert").waitFor();
    assert.match(await page.getByRole("alert").innerText(), /team-y/);
    // Access: bind a role to an identity of the organization, and create an invite whose code shows once.
    const made = await fetch(`${server.apiUrl}/iam/v2/identities/${server.org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "ci-robot", claimMatch: { issuer: "https://ci.example.com", subject: "robot" } }),
    });
    assert.equal(made.status, 200);
    await page.getByRole("link", { name: "Access: role bindings and invites" }).click();
    await page.getByRole("heading", { name: "Access" }).waitFor();
    await page.getByLabel("Identity").selectOption({ label: "ci-robot" });
    await page.getByLabel("Role", { exact: true }).selectOption({ label: "viewer" });
    await page.getByRole("button", { name: "Bind role" }).click();
    await page.getByRole("cell", { name: "ci-robot", exact: true }).waitFor();
    await page.getByLabel("Invite with role").selectOption({ label: "editor" });
    await page.getByRole("button", { name: "Create invite" }).click();
    await page.getByText(/Invite code \(shown once\)/).waitFor();
    await accessible(page, "access");
    const editorInvite = page.getByRole("listitem").filter({ hasText: /^editor for anyone with the code/ });
    await editorInvite.waitFor();
    await editorInvite.getByRole("button", { name: "Revoke" }).click();
    await editorInvite.waitFor({ state: "detached" });

    // Identities, and a sign-in provider whose external group maps to a role.
    await page.getByRole("link", { name: "Back to the group" }).click();
    await page.getByRole("link", { name: "Identities and sign-in providers" }).click();
    await page.getByRole("cell", { name: "ci-robot", exact: true }).waitFor();
    assert.match(await page.getByRole("row").filter({ hasText: "ci-robot" }).innerText(), /tokens of https:\/\/ci\.example\.com for robot/);
    await page.getByLabel("Provider name").fill("corp-sso");
    await page.getByLabel("Issuer URL").fill("https://sso.example.com");
    await page.getByLabel("Client id").fill("platform");
    await page.getByLabel("Client secret").fill("a secret");
    await page.getByLabel("Groups claim").fill("groups");
    await page.getByLabel("Default role").selectOption({ label: "viewer" });
    await page.getByRole("button", { name: "Add provider" }).click();
    const provider = page.getByRole("article", { name: "corp-sso" });
    await provider.waitFor();
    assert.match(await provider.innerText(), /Default role\s+viewer/);
    await provider.getByLabel("External group").fill("platform-admins");
    await provider.getByLabel("Mapped role").selectOption({ label: "owner" });
    await provider.getByRole("button", { name: "Map group" }).click();
    await provider.getByRole("cell", { name: "platform-admins", exact: true }).waitFor();
    const providers = await fetch(`${server.apiUrl}/iam/v2/identityProviders?uidp.children_of=${server.org.uid}`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
    assert.deepEqual(((await providers.json()) as { identityProviders: Array<{ name: string }> }).identityProviders.map((p) => p.name), ["corp-sso"]);
    await accessible(page, "identities and sign-in providers");

    // Events: a subscription made over the API shows with its delivery state.
    const subscribed = await fetch(`${server.apiUrl}/events/v2/subscriptions/${server.org.uid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sink: "http://127.0.0.1:9/platform" }) /* nothing listens: deliveries fail */,
    });
    assert.equal(subscribed.status, 200, await subscribed.clone().text());
    await page.getByRole("link", { name: "Back to the group" }).click();
    await page.getByRole("link", { name: "Event subscriptions" }).click();
    await page.getByRole("cell", { name: "http://127.0.0.1:9/platform", exact: true }).waitFor();
    await accessible(page, "event subscriptions");

    await page.getByRole("link", { name: "Roles" }).click();
    const viewerRole = page.getByRole("article", { name: "viewer" });
    await viewerRole.waitFor();
    assert.match(await viewerRole.innerText(), /IAM\s+groups list/, "capabilities grouped by domain");
    await accessible(page, "roles");
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("is served with content-hashed assets cached for good, within the bundle budget", async () => {
    const page = await fetch(`${server.apiUrl}/console/`);
    assert.equal(page.headers.get("cache-control"), "no-cache");
    const html = await page.text();
    const scripts = [...html.matchAll(/src="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
    assert.ok(scripts.length > 0, html);
    let compressed = 0;
    for (const path of scripts) {
      const asset = await fetch(`${server.apiUrl}${path}`);
      assert.equal(asset.headers.get("cache-control"), "public, max-age=31536000, immutable");
      compressed += gzipSync(Buffer.from(await asset.arrayBuffer())).byteLength;
    }
    assert.ok(compressed < 250_000, `the first page's JavaScript is ${compressed} bytes gzipped (budget 250 kB)`);
    assert.equal((await fetch(`${server.apiUrl}/console/assets/none.js`)).status, 404);
    assert.equal((await fetch(`${server.apiUrl}/console/any/page`)).status, 200, "the console routes in the browser");
  });

  test("a tag's history is a timeline whose pinned reference copies; an image's report charts its severities", { skip: skopeoSkip, timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "platform-api-console-"));
    try {
      const crates = join(ROOT, "samples/osv/rustsec/crates");
      await importOsvFeed(server.store.db, readOsvFeed(readdirSync(crates).map((f) => join(crates, f))));
      const registryToken = (await server.server.tokens.issue({ subject: server.ownerUid, audience: server.registryUrl })).token;
      // Not synchronously: the registry answering skopeo runs in this process.
      for (const [layout, lock] of [["fixed", "normal"], ["vulnerable", "nickel"]]) {
        await execFileAsync("bash", [join(ROOT, "scripts/oci-layout-of.sh"), join(dir, layout), "v1", `srv/app/Cargo.lock=${join(ROOT, `test/fixtures/inventory/${lock}.Cargo.lock`)}`]);
      }
      // `latest` moves from the fixed image to the vulnerable one (its history has both); `prod`
      // from the vulnerable one to the fixed one, resolving its vulnerabilities today.
      for (const [layout, tag] of [["fixed", "latest"], ["vulnerable", "latest"], ["vulnerable", "prod"], ["fixed", "prod"]]) {
        await execFileAsync("skopeo", ["--insecure-policy", "copy", "--dest-tls-verify=false", "--dest-creds", `_token:${registryToken}`, `oci:${join(dir, layout)}:v1`, `docker://${server.registryUrl.slice(7)}/acme/shop:${tag}`], { env: { ...process.env, HOME: dir } });
      }
      await server.server.workers.get("reports")!.drain!();

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ["clipboard-read", "clipboard-write"] });
      const page = await context.newPage();
      await page.goto(`${server.apiUrl}/console/`);
      await signIn(page, "ada");
      await page.getByRole("link", { name: "acme" }).click();
      await page.getByRole("link", { name: "shop" }).click();
      await page.getByRole("heading", { name: "shop" }).waitFor();
      // Each tag's image with its architectures and size; what the move of `prod` resolved, per day.
      const latestRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "latest", exact: true }) });
      await latestRow.getByRole("cell", { name: /^\d+(\.\d)? (B|kB|MB)$/ }).waitFor();
      assert.match(await latestRow.innerText(), /amd64/);
      const resolved = page.getByRole("table", { name: "Tag moves that resolved vulnerabilities" });
      await resolved.waitFor();
      assert.match(await resolved.getByRole("row").filter({ hasText: "prod" }).innerText(), /RUSTSEC-2019-0009/);
      assert.match(await page.getByLabel("Resolved vulnerabilities per day").innerText(), new RegExp(`${new Date().toISOString().slice(0, 10)}\\s*[1-9]`));
      await accessible(page, "a repository");
      await page.getByRole("link", { name: "latest", exact: true }).click();
      await page.getByRole("heading", { name: "shop:latest" }).waitFor();
      const entries = page.locator(".timeline li");
      await entries.nth(1).waitFor();
      assert.equal(await entries.count(), 2, "latest pointed at two images");
      await accessible(page, "a tag's history");
      await entries.first().getByRole("button").click();
      await page.getByText(/^Copied shop@sha256:/).waitFor();
      const pinned = await page.evaluate(() => navigator.clipboard.readText());
      const history = await fetch(`${server.apiUrl}/registry/v1/tags/${page.url().split("#/tags/")[1]}/history`, { headers: { authorization: `Bearer ${server.ownerToken}` } });
      const items = ((await history.json()) as { items: Array<{ digest: string }> }).items;
      assert.equal(pinned, `shop@${items.at(-1)!.digest}`, "the newest digest, pinned");

      await page.goBack();
      await page.getByRole("link", { name: "Vulnerability report of latest" }).click();
      // Exact: the repository page just left has a heading "Resolved vulnerabilities per day" and
      // RUSTSEC-2019-0009 cells of its own; the report's figure is read once its report has loaded.
      await page.getByRole("heading", { name: "Vulnerabilities", exact: true }).waitFor();
      await page.getByText(/packages; report done/).waitFor();
      await page.getByRole("cell", { name: "RUSTSEC-2019-0009" }).waitFor();
      assert.match(await page.locator("figure").innerText(), /critical\s*[1-9]/);
      await accessible(page, "a vulnerability report");

      await page.getByRole("link", { name: "Advisories" }).click();
      await page.getByLabel("Package").fill("openssl");
      await page.getByLabel("Ecosystem").fill("crates.io");
      await page.getByLabel("Version").fill("0.10.50");
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByRole("cell", { name: "RUSTSEC-2023-0044" }).waitFor();
      assert.match(await page.locator("caption").innerText(), /^5 advisories$/);
      await accessible(page, "advisories");
      await page.getByRole("link", { name: "RUSTSEC-2023-0044" }).click();
      await page.getByRole("heading", { name: "RUSTSEC-2023-0044" }).waitFor();
      assert.match(await page.getByRole("table", { name: "Affected ranges" }).innerText(), /from 0\.0\.0-0 until 0\.10\.55 \(fixed\)/);
      await accessible(page, "an advisory");

      await importLibraries(server.store.db, server.org.uid, readLibraryFeed([join(ROOT, "test/fixtures/libraries/npm")]));
      await page.getByRole("link", { name: "Libraries" }).click();
      await page.getByLabel("Name").fill("minimist");
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByRole("button", { name: "minimist" }).click();
      await page.getByRole("cell", { name: "1.2.8" }).waitFor();
      await accessible(page, "libraries");
      await context.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a viewer sees no write controls; an ended session returns to sign-in on the same page", { timeout: 120_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await page.goto(`${server.apiUrl}/console/`);
    await signIn(page, "vic");
    await page.getByLabel("Invite code").fill(await invite("viewer", "vic@example.com"));
    await page.getByRole("button", { name: "Join" }).click();
    await page.getByRole("heading", { name: "Organizations" }).waitFor();
    // By keyboard alone: Tab reaches the organization's link, its focus is visible, Enter opens it.
    const focused = () => page.evaluate(() => ({ text: document.activeElement?.textContent ?? "", outline: getComputedStyle(document.activeElement!).outlineStyle }));
    for (let presses = 0; (await focused()).text !== "acme"; presses++) {
      assert.ok(presses < 20, "Tab reaches the organization within 20 presses");
      await page.keyboard.press("Tab");
    }
    assert.equal((await focused()).outline, "solid", "the focused link shows its focus");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "acme" }).waitFor();
    // Dark or light from the system setting, each passing axe (contrast included).
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: "light" });
    assert.equal(await background(), "rgb(255, 255, 255)");
    await page.emulateMedia({ colorScheme: "dark" });
    assert.equal(await background(), "rgb(13, 17, 23)");
    await accessible(page, "a folder in the dark");
    await page.emulateMedia({ colorScheme: "light" });
    assert.equal(await page.getByRole("button", { name: "Create folder" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Rename" }).count(), 0);
    await accessible(page, "a folder at a phone's width");
    await page.getByRole("link", { name: "Identities and sign-in providers" }).click();
    await page.getByRole("table", { name: "Identities at this group and below" }).waitFor();
    await page.getByRole("heading", { name: "corp-sso" }).waitFor();
    assert.equal(await page.getByRole("button", { name: /^(Add provider|Delete|Map group|Remove)/ }).count(), 0, "a viewer sees no write control");
    await page.getByRole("link", { name: "Back to the group" }).click();
    await page.getByRole("heading", { name: "acme" }).waitFor();

    const where = new URL(page.url()).hash;
    await page.evaluate(() => {
      const key = "platform-console.session";
      const session = JSON.parse(sessionStorage.getItem(key)!) as Record<string, string>;
      sessionStorage.setItem(key, JSON.stringify({ ...session, expiry: new Date(0).toISOString(), refreshToken: "spent" }));
    });
    await page.reload();
    await page.getByRole("alert").waitFor();
    assert.match(await page.getByRole("alert").innerText(), /session has ended/);
    await signIn(page, "vic", true);
    await page.getByRole("heading", { name: "acme" }).waitFor();
    assert.equal(new URL(page.url()).hash, where, "back on the page the person was on");
    await page.close();
  });
});
