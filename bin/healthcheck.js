#!/usr/bin/env node
// The container's HEALTHCHECK: exits 0 when GET /readyz on the API port of this machine answers 200,
// 1 otherwise (not listening, not ready, no answer within 3 s). Reads PORT (default 8080) and
// TLS_CERT (set: https, the certificate not checked: this asks its own process, by address).
import http from "node:http";
import https from "node:https";

const port = Number(process.env.PORT || 8080);
const secure = Boolean(process.env.TLS_CERT);
const request = (secure ? https : http).get(
  { host: "127.0.0.1", port, path: "/readyz", timeout: 3000, rejectUnauthorized: false },
  (res) => {
    res.resume();
    process.exit(res.statusCode === 200 ? 0 : 1);
  },
);
request.on("timeout", () => request.destroy(new Error("no answer within 3 s")));
request.on("error", (error) => {
  process.stderr.write(`healthcheck: ${error.message}\n`);
  process.exit(1);
});
