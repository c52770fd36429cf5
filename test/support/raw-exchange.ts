import http from "node:http";
import http2 from "node:http2";

/** What the server answered, as it came off the wire. */
export interface RawAnswer {
  status: number;
  /** Response headers (HTTP/2 pseudo-headers left out). */
  headers: Record<string, string | string[]>;
  body: Buffer;
}

export interface RawRequest {
  method?: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** One request over HTTP/1.1 (`port`) with exactly the headers given (plus Host and Connection). */
export function h1Exchange(port: number, req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const out = http.request({ host: "127.0.0.1", port, method: req.method ?? "POST", path: req.path, headers: req.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers as RawAnswer["headers"], body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    out.on("error", reject);
    out.end(req.body);
  });
}

/** One request over HTTP/2 on `session` with exactly the headers given. */
export function h2Exchange(session: http2.ClientHttp2Session, req: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": req.method ?? "POST", ":path": req.path, ...req.headers });
    let status = 0;
    const headers: RawAnswer["headers"] = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      for (const [name, value] of Object.entries(h)) if (!name.startsWith(":") && value !== undefined) headers[name] = value as string | string[];
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status, headers, body: Buffer.concat(chunks) }));
    stream.on("error", reject);
    stream.end(req.body);
  });
}
