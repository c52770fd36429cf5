#!/usr/bin/env node
// A webhook receiver for the server's events: verifies each CloudEvent's bearer token against
// the server's JWKS (issuer = the API URL, audience = this sink's URL) and prints the event.
//
//   node examples/event-receiver.mjs [sink URL] [API URL]
//   (defaults: http://127.0.0.1:9999/hook and http://localhost:8080)
//
// Answers 204 to a verified event, 401 to one whose token does not verify (the server retries
// it), 200 to GET /readyz (it listens: subscribe now, and the first deliveries find it), 404
// elsewhere. Prints `verified <ce-type> <ce-subject> <body>` or `REJECTED <ce-type>: <why>`.
import http from "node:http";
import { createRemoteJWKSet, jwtVerify } from "jose";

const sink = new URL(process.argv[2] ?? "http://127.0.0.1:9999/hook");
const api = (process.argv[3] ?? "http://localhost:8080").replace(/\/+$/, "");
const jwks = createRemoteJWKSet(new URL(`${api}/.well-known/jwks.json`));

const server = http.createServer(async (req, res) => {
  const path = new URL(req.url ?? "/", sink).pathname;
  if (req.method === "GET" && path === "/readyz") return res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
  if (req.method !== "POST" || path !== sink.pathname) return res.writeHead(404).end();
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const type = req.headers["ce-type"];
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  try {
    const { payload } = await jwtVerify(token, jwks, { issuer: api, audience: sink.href });
    console.log(`verified ${type} ${req.headers["ce-subject"]} (${payload.sub}, id ${req.headers["ce-id"]}) ${Buffer.concat(chunks).toString("utf8")}`);
    res.writeHead(204).end();
  } catch (error) {
    console.log(`REJECTED ${type}: ${error.message}`);
    res.writeHead(401).end();
  }
});
server.listen(Number(sink.port || 80), sink.hostname, () => console.error(`receiving events at ${sink.href}, verified against ${api}/.well-known/jwks.json`));
