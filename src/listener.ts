import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface ListenerLimits {
  /** Largest request header block, bytes (HTTP/1.1 answers 431; HTTP/2 refuses the stream). */
  maxHeaderBytes: number;
  /** Concurrent streams per HTTP/2 connection (advertised in SETTINGS). */
  maxConcurrentStreams: number;
  /** Time to receive a whole HTTP/1.1 request, ms (408 after). */
  requestTimeoutMs: number;
}

export interface DualListener {
  server: net.Server;
  /**
   * Stops accepting; lets requests in flight finish (HTTP/2 sessions get GOAWAY,
   * idle HTTP/1.1 connections close); after `graceMs` remaining connections are
   * cut. Resolves when every connection is closed.
   */
  close(graceMs?: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One cleartext port for HTTP/1.1 and HTTP/2 (prior knowledge, as gRPC uses):
 * the first bytes of each connection decide which server gets it.
 */
export function createDualListener(handler: Handler, limits: ListenerLimits): DualListener {
  const h1 = http.createServer(
    { maxHeaderSize: limits.maxHeaderBytes, requestTimeout: limits.requestTimeoutMs, headersTimeout: Math.min(limits.requestTimeoutMs, 60_000) },
    handler,
  );
  const h2 = http2.createServer(
    {
      maxSessionMemory: 64,
      settings: { maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxHeaderBytes },
      maxSendHeaderBlockLength: limits.maxHeaderBytes,
    },
    handler,
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  /** Connections whose first bytes have not arrived yet. */
  const undecided = new Set<net.Socket>();
  const all = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    all.add(socket);
    undecided.add(socket);
    socket.on("close", () => {
      all.delete(socket);
      undecided.delete(socket);
    });
    socket.on("error", () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && seen.length < PREFACE.length) return;
      socket.off("data", onData);
      undecided.delete(socket);
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        // The HTTP/2 session drains the buffered bytes, then reads the handle natively.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });

  return {
    server,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        // Answers after this point tell HTTP/1.1 clients the connection is ending.
        h1.on("request", (_req, res) => res.setHeader("connection", "close"));
        for (const socket of undecided) socket.destroy();
        for (const session of sessions) session.close();
        const sweep = setInterval(() => h1.closeIdleConnections(), 25);
        const force = setTimeout(() => {
          for (const socket of all) socket.destroy();
        }, graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(force);
          resolve();
        });
        h1.closeIdleConnections();
      });
    },
  };
}
