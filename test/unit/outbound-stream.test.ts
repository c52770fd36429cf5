import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { OutboundFetchError, outboundStream } from "../../src/outbound/fetch.js";

// outboundStream's redirects against two loopback servers (two origins): bounded, each hop checked, Authorization kept to the first origin.

const seen: Array<{ path: string; authorization?: string }> = [];
let first: http.Server;
let second: http.Server;
const base = (server: http.Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const policy = { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 5000, maxBytes: 1024 };

before(async () => {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
    const hops = /^\/hop\/(\d+)$/.exec(req.url ?? "");
    if (hops && Number(hops[1]) > 0) return void res.writeHead(307, { location: `/hop/${Number(hops[1]) - 1}` }).end();
    if (req.url === "/elsewhere") return void res.writeHead(302, { location: `${base(second)}/blob` }).end();
    if (req.url === "/ftp") return void res.writeHead(302, { location: "ftp://example.com/x" }).end();
    if (req.url === "/big") return void res.writeHead(200, { "content-length": "2048" }).end(Buffer.alloc(2048));
    res.writeHead(200, { "content-type": "text/plain" }).end("the bytes");
  };
  first = http.createServer(handler);
  second = http.createServer(handler);
  await Promise.all([first, second].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
});
after(() => Promise.all([first, second].map((s) => new Promise((resolve) => s.close(resolve)))));

const read = async (body: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

test("redirects are followed up to maxRedirects; past it the 3xx is the answer; without it none is followed", async () => {
  const three = await outboundStream(new URL(`${base(first)}/hop/3`), { method: "GET", headers: {} }, { ...policy, maxRedirects: 3 });
  assert.equal(three.status, 200);
  assert.equal(await read(three.body), "the bytes");
  const four = await outboundStream(new URL(`${base(first)}/hop/4`), { method: "GET", headers: {} }, { ...policy, maxRedirects: 3 });
  assert.equal(four.status, 307);
  four.body.destroy();
  const none = await outboundStream(new URL(`${base(first)}/hop/1`), { method: "GET", headers: {} }, policy);
  assert.equal(none.status, 307);
  none.body.destroy();
});

test("Authorization goes to the first origin only; a hop the policy refuses fails", async () => {
  seen.length = 0;
  const moved = await outboundStream(new URL(`${base(first)}/elsewhere`), { method: "GET", headers: { authorization: "Bearer secret" } }, { ...policy, maxRedirects: 3 });
  assert.equal(await read(moved.body), "the bytes");
  assert.deepEqual(seen, [{ path: "/elsewhere", authorization: "Bearer secret" }, { path: "/blob", authorization: undefined }]);
  await assert.rejects(outboundStream(new URL(`${base(first)}/ftp`), { method: "GET", headers: {} }, { ...policy, maxRedirects: 3 }), OutboundFetchError);
  await assert.rejects(outboundStream(new URL(`${base(first)}/elsewhere`), { method: "GET", headers: {} }, { ...policy, allowPrivateAddresses: false, maxRedirects: 3 }), OutboundFetchError);
});

test("a body over maxBytes is refused", async () => {
  await assert.rejects(outboundStream(new URL(`${base(first)}/big`), { method: "GET", headers: {} }, policy), /larger than 1024 bytes/);
});
