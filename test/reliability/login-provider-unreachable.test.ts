import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { freePort, startTestServer, type TestServer } from "../support/test-server.js";

/**
 * The login broker with a provider it cannot use: nothing listening at the issuer, or an issuer
 * whose discovery document answers 500. A login, a device login and a token request are answered
 * 502 with a google.rpc.Status naming the provider (reason IDENTITY_PROVIDER_UNREACHABLE), never
 * 500; the server's readiness is unaffected.
 */

interface Status {
  code: number;
  message: string;
  details: { reason?: string }[];
}

const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url");
const loginQuery = new URLSearchParams({ redirect_uri: "http://127.0.0.1:9/callback", code_challenge: challenge, code_challenge_method: "S256", state: "s" });

for (const kind of ["nothing listening", "discovery answering 500"] as const) {
  describe(`a login provider with ${kind}`, () => {
    let server: TestServer;
    let issuer: string;
    let broken: http.Server | undefined;

    before(async () => {
      if (kind === "nothing listening") issuer = `http://127.0.0.1:${await freePort()}`;
      else {
        broken = http.createServer((_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("down for maintenance"));
        await new Promise<void>((resolve) => broken!.listen(0, "127.0.0.1", resolve));
        issuer = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
      }
      server = await startTestServer({
        logLevel: "silent",
        upstreamIssuers: { allowHttp: true, allowPrivateAddresses: true },
        login: { issuer, clientId: "platform", clientSecret: "s3cret" },
      });
    });
    after(async () => {
      await server?.close();
      broken?.close();
    });

    async function assertUnreachable(res: Response): Promise<void> {
      const text = await res.text();
      assert.equal(res.status, 502, text);
      const status = JSON.parse(text) as Status;
      assert.equal(status.code, 14);
      assert.ok(status.message.includes(issuer), status.message);
      assert.ok(status.details.some((d) => d.reason === "IDENTITY_PROVIDER_UNREACHABLE"), text);
    }

    test("a browser login is answered 502 naming the provider", async () => {
      await assertUnreachable(await fetch(`${server.apiUrl}/auth/v1/login?${loginQuery}`, { redirect: "manual" }));
    });

    test("a device login is answered 502 naming the provider", async () => {
      await assertUnreachable(
        await fetch(`${server.apiUrl}/auth/v1/device/code`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" }),
      );
    });

    test("readiness is unaffected", async () => {
      assert.equal((await fetch(`${server.apiUrl}/readyz`)).status, 200);
    });
  });
}
