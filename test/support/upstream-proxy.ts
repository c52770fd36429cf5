import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A tiny HTTP proxy in front of an upstream registry, as a test sees the upstream: it counts the
 * requests by `<method> <path>`, can refuse every connection (`down`: the upstream unreachable),
 * can delay blob bodies (`blobDelayMs`) and flips one byte of the blobs whose digests are in `corrupt`.
 */
export interface UpstreamProxy {
  url: string;
  counts: Map<string, number>;
  count(method: string, path: string): number;
  down: boolean;
  blobDelayMs: number;
  corrupt: Set<string>;
  close(): Promise<void>;
}

export async function startUpstreamProxy(target: string): Promise<UpstreamProxy> {
  const counts = new Map<string, number>();
  const state = { down: false, blobDelayMs: 0, corrupt: new Set<string>() };
  const server = http.createServer((req, res) => {
    if (state.down) return void req.socket.destroy();
    const path = (req.url ?? "/").split("?")[0];
    const key = `${req.method} ${path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const blob = /\/blobs\/(sha256:[0-9a-f]{64})$/.exec(path)?.[1];
    const upstream = http.request(new URL(req.url ?? "/", target), { method: req.method, headers: { ...req.headers, host: new URL(target).host }, agent: false }, async (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (blob !== undefined && req.method === "GET" && state.blobDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.blobDelayMs));
      let flipped = blob === undefined || req.method !== "GET" || !state.corrupt.has(blob);
      answer.on("data", (chunk: Buffer) => {
        if (!flipped) {
          chunk = Buffer.from(chunk);
          chunk[0] ^= 0xff;
          flipped = true;
        }
        res.write(chunk);
      });
      answer.on("end", () => res.end());
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    count: (method: string, path: string) => counts.get(`${method} ${path}`) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
