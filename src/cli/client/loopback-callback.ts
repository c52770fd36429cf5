import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CommandError } from "../../command/options.js";

/** The loopback redirect of a browser sign-in (RFC 8252): its URI, and the code it receives. */
export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback`. */
  redirectUri: string;
  /**
   * Resolves to the `code` of the first request to /callback, once the browser has been told
   * it is signed in. Rejects with CommandError when that request carries `error`, a `state` other
   * than the expected one, or no code (the browser is shown why), or after `timeoutMs`.
   * The listener is closed either way.
   */
  code: Promise<string>;
}

/** Listens on 127.0.0.1, on a free port, for the redirect that ends a sign-in started with `state`. */
export async function listenForCallback(state: string, timeoutMs: number): Promise<LoopbackCallback> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (request.method !== "GET" || url.pathname !== "/callback") return void response.writeHead(404).end();
    const params = url.searchParams;
    const failure =
      params.get("state") !== state ? "the answer does not belong to this sign-in (its state differs); run platform-api login again"
      : params.get("error") !== null ? `sign-in refused: ${params.get("error_description") || params.get("error")}`
      : !params.get("code") ? "the answer carries no code"
      : undefined;
    page(response, failure === undefined ? 200 : 400, failure === undefined ? "Signed in. You can close this window." : `Sign-in failed: ${failure}`);
    if (failure === undefined) settle.resolve(params.get("code")!);
    else settle.reject(new CommandError(failure));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const timer = setTimeout(() => settle.reject(new CommandError(`no sign-in within ${timeoutMs / 1000} s; run platform-api login again`)), timeoutMs);
  const close = () => {
    clearTimeout(timer);
    server.close();
    server.closeIdleConnections();
  };
  void code.then(close, close);
  return { redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, code };
}

function page(response: ServerResponse, status: number, text: string): void {
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  response
    .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", connection: "close" })
    .end(`<!doctype html><meta charset="utf-8"><title>platform-api</title><p>${escaped}</p>\n`);
}
