import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { chromiumSkip, launchChromium } from "../support/browser.js";
import { dropFresh, testDatabases } from "../support/databases.js";
import { BIN } from "../support/repo.js";
import { startTestIdp, type TestIdp } from "../support/test-idp.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * The device confirmation page (`/auth/v1/device`, device-form.ts) and `platform-api login
 * --headless` completed by a person in headless Chromium: the CLI runs as a
 * child process with its own XDG_CONFIG_HOME against a server whose login provider is a real
 * OpenID Provider (test-idp.ts); the test reads the address and code from the CLI's output, opens
 * the address, types the code on the server's confirmation page, signs in at the provider's page,
 * and sees the CLI store the session. The page sends `Referrer-Policy: no-referrer`, so Chromium
 * posts the confirmation with `Origin: null`: the page's form token is what proves it was posted
 * from the page. Another site's form, posting a code and a token it fetched for itself, is refused.
 */

const dir = mkdtempSync(join(tmpdir(), "platform-api-cli-login-chromium-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Session {
  token: string;
  expiry: string;
  refreshToken: string;
}

/** A test IdP with ada, and a server signing people in there. */
async function startLoginServer(dbUrl: string): Promise<{ idp: TestIdp; server: TestServer }> {
  const idp = await startTestIdp();
  const server = await startTestServer({
    apiUrl: "listen",
    dbUrl,
    login: { issuer: idp.issuer, clientId: "platform", clientSecret: "s3cret" },
    upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
  });
  await idp.addClient({ client_id: "platform", client_secret: "s3cret", redirect_uris: [`${server.apiUrl}/auth/v1/callback`], token_endpoint_auth_method: "client_secret_post" });
  idp.setAccount("ada", { email: "ada@example.com", email_verified: true, name: "Ada" });
  return { idp, server };
}

/** A page on another site (`localhost`, where the API is `127.0.0.1`) answering `html`. */
async function startOtherSite(html: () => string): Promise<{ origin: string; close(): Promise<void> }> {
  const site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html()));
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://localhost:${(site.address() as AddressInfo).port}`,
    close: () => {
      site.closeAllConnections();
      return new Promise<void>((resolve) => site.close(() => resolve()));
    },
  };
}

const subjectOf = (jwt: string): string => (JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")) as { sub: string }).sub;

for (const database of await testDatabases()) {
  describe(`the device confirmation on ${database.name}`, { skip: database.skip, timeout: 120_000 }, () => {
    let idp: TestIdp;
    let server: TestServer;
    let dbUrl: string;
    let browser: Browser;
    const config = join(dir, `config-${database.name}`);
    const home = join(dir, `home-${database.name}`);
    const env = { XDG_CONFIG_HOME: config, HOME: home };

    before(async () => {
      mkdirSync(home, { recursive: true });
      dbUrl = await database.fresh();
      ({ idp, server } = await startLoginServer(dbUrl));
      if (!chromiumSkip) browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      await idp?.close();
      if (dbUrl) await dropFresh(dbUrl);
    });

    /** A pending device login's user code. */
    const startDeviceLogin = async () => ((await (await fetch(`${server.apiUrl}/auth/v1/device/code`, { method: "POST" })).json()) as { user_code: string }).user_code;
    /** GET of the confirmation page of `userCode`: the page's cookie (`name=value`), its form token and its headers. */
    async function confirmationPage(userCode: string) {
      const res = await fetch(`${server.apiUrl}/auth/v1/device?user_code=${userCode}`);
      const html = await res.text();
      assert.equal(res.status, 200, html);
      return { cookie: res.headers.getSetCookie()[0].split(";")[0], formToken: /name="form_token" value="([^"]*)"/.exec(html)![1], headers: res.headers };
    }
    const post = (fields: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${server.apiUrl}/auth/v1/device`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(fields).toString() });

    test("the confirmation page binds its form to the browser (cookie) and lets the form lead to the code's provider only", async () => {
      const { cookie, formToken, headers } = await confirmationPage(await startDeviceLogin());
      assert.match(headers.get("set-cookie") ?? "", /^platform-device-form=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
      assert.equal(cookie.split("=")[1], formToken);
      assert.match(headers.get("content-security-policy") ?? "", new RegExp(`form-action 'self' ${idp.issuer};`));
      const again = await fetch(`${server.apiUrl}/auth/v1/device?user_code=${await startDeviceLogin()}`, { headers: { cookie } });
      assert.equal(/name="form_token" value="([^"]*)"/.exec(await again.text())?.[1], formToken, "a browser's own value is kept: its other tabs stay valid");
      const lookup = await fetch(`${server.apiUrl}/auth/v1/device`);
      assert.match(await lookup.text(), /<form method="get"/);
      assert.equal(lookup.headers.get("set-cookie"), null);
    });

    test("a post with Origin null is taken with the page's token and cookie, refused without either or with another's", async () => {
      const userCode = await startDeviceLogin();
      const mine = await confirmationPage(userCode);
      const theirs = await confirmationPage(await startDeviceLogin());
      const browserHeaders = { origin: "null", "sec-fetch-site": "same-origin" };
      const refusals: Array<[string, Record<string, string>, Record<string, string>]> = [
        ["no token", { user_code: userCode }, { ...browserHeaders, cookie: mine.cookie }],
        ["no cookie", { user_code: userCode, form_token: mine.formToken }, browserHeaders],
        ["another browser's token", { user_code: userCode, form_token: theirs.formToken }, { ...browserHeaders, cookie: mine.cookie }],
        ["another origin", { user_code: userCode, form_token: mine.formToken }, { origin: "http://localhost:1", cookie: mine.cookie }],
        ["a cross-site post", { user_code: userCode, form_token: mine.formToken }, { origin: "null", "sec-fetch-site": "cross-site", cookie: mine.cookie }],
        ["neither Origin nor a token", { user_code: userCode }, {}],
      ];
      for (const [why, fields, headers] of refusals) {
        const refused = await post(fields, headers);
        assert.equal(refused.status, 403, why);
        assert.match(await refused.text(), /Confirm the code on this server&#39;s own page/, why);
      }
      const taken = await post({ user_code: userCode, form_token: mine.formToken }, { ...browserHeaders, cookie: mine.cookie });
      assert.equal(taken.status, 302, await taken.text());
      assert.ok(taken.headers.get("location")?.startsWith(`${idp.issuer}/`), taken.headers.get("location") ?? "");
    });

    test("the person types the code the CLI shows, signs in at the provider, and the CLI stores the session", { skip: chromiumSkip }, async () => {
      const api = server.apiUrl;
      const child = spawn(process.execPath, [BIN, "login", "--headless", "--api-url", api, "--timeout", "60s"], {
        env: { ...process.env, PLATFORM_API_URL: "", ...env, BROWSER: "/bin/false" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      const context = await browser.newContext();
      try {
        const { url, code } = await new Promise<{ url: string; code: string }>((resolve, reject) => {
          child.stderr.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
            const match = /^Open (\S+) and confirm the code (\S+)$/m.exec(stderr);
            if (match) resolve({ url: match[1], code: match[2] });
          });
          void exited.then((status) => reject(new Error(`login --headless exited (${status}) before printing a URL: ${stderr}`)));
        });
        assert.ok(url.startsWith(`${api}/auth/v1/device?user_code=`), url);

        const page = await context.newPage();
        // The address as a person on another device types it: without the code, which they type on the page.
        await page.goto(url.split("?")[0]);
        await page.locator("input[name=user_code]").pressSequentially(code);
        await Promise.all([page.waitForURL((at) => at.searchParams.get("user_code") === code), page.click("button[type=submit]")]);
        assert.match(await page.locator("body").innerText(), /only continue if you started this sign-in/);
        const [confirmed] = await Promise.all([
          page.waitForResponse((response) => response.request().method() === "POST" && response.url() === `${api}/auth/v1/device`),
          page.click("button[type=submit]"),
        ]);
        const sent = await confirmed.request().allHeaders();
        assert.equal(sent.origin, "null", "the page's no-referrer policy makes Chromium name no origin");
        assert.equal(sent["sec-fetch-site"], "same-origin");
        assert.equal(confirmed.status(), 302, await confirmed.text().catch(() => ""));
        await page.waitForURL((at) => at.origin === idp.issuer);
        await page.fill("input[name=login]", "ada");
        await page.fill("input[name=password]", "any password");
        await Promise.all([page.waitForURL((at) => at.href.startsWith(`${api}/auth/v1/callback`)), page.click("button[type=submit]")]);
        assert.match(await page.locator("body").innerText(), /You are signed in/);

        const status = await exited;
        assert.equal(status, 0, stderr);
        assert.match(stderr, new RegExp(`Signed in to ${api}\\n$`));
        assert.equal(stdout, "");
      } finally {
        child.kill();
        await context.close();
      }
      const stored = JSON.parse(readFileSync(join(config, "platform-api", "credentials.json"), "utf8")) as { current?: string; sessions: Record<string, Session> };
      assert.equal(stored.current, api);
      const session = stored.sessions[api];
      assert.ok(session.token && session.refreshToken && Date.parse(session.expiry) > Date.now(), JSON.stringify(session));
      const who = await fetch(`${api}/auth/v1/ok`, { headers: { authorization: `Bearer ${session.token}` } });
      await who.body?.cancel();
      assert.equal(who.status, 200);
      assert.ok(subjectOf(session.token));
    });

    test("another site's form posting a code and a form token it fetched for itself is refused (login CSRF)", { skip: chromiumSkip }, async () => {
      const api = server.apiUrl;
      const started = (await (await fetch(`${api}/auth/v1/device/code`, { method: "POST" })).json()) as { user_code: string };
      // The attacker opens the confirmation page itself and takes the form's hidden fields.
      const own = await (await fetch(`${api}/auth/v1/device?user_code=${started.user_code}`)).text();
      const hidden = [...own.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => `<input type="hidden" name="${name}" value="${value}">`);
      const attacker = await startOtherSite(
        () =>
          `<!doctype html><title>Win a prize</title><form method="post" action="${api}/auth/v1/device"><input name="user_code" value="${started.user_code}">${hidden.join("")}<button type="submit">Claim</button></form>`,
      );
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(attacker.origin);
        const [answer] = await Promise.all([page.waitForResponse((response) => response.url() === `${api}/auth/v1/device`), page.click("button[type=submit]")]);
        assert.equal(answer.status(), 403);
        assert.match(await page.locator("body").innerText(), /Confirm the code on this server's own page/);
      } finally {
        await context.close();
        await attacker.close();
      }
    });
  });
}
