import http from "node:http";
import type { Limits } from "../config.js";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { SweptDeadlines } from "./swept-deadlines.js";
import type { TlsCredentials } from "./tls-credentials.js";
import type { NodeResponse } from "./http/node-types.js";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

/** A listener's request handler; a promise it returns that rejects is a failed request, as a throw is. */
export type Handler = (req: Request, res: Response) => void | Promise<void>;

/**
 * What a listener does with a request whose handler threw or rejected: log it and answer 500 (or,
 * once the answer has begun, cut it short). It must not throw; if it does, the request is destroyed.
 */
export type FailureAnswer = (error: unknown, req: Request, res: Response) => void;

/**
 * The limits a listener applies (their meanings in `Limits`, src/config.ts): the request timeout
 * bounds receiving a whole request (HTTP/1.1 408, an HTTP/2 stream reset), not sending the answer;
 * the headers timeout also covers the first bytes that choose the protocol.
 */
export type ListenerLimits = Pick<Limits, "maxHeaderBytes" | "maxConcurrentStreams" | "requestTimeoutMs" | "headersTimeoutMs" | "idleTimeoutMs" | "keepAliveTimeoutMs" | "maxConnections">;

export interface DualListener {
  server: net.Server;
  /** TLS only: serves new connections with `credentials`; connections already open keep theirs. */
  setCredentials(credentials: TlsCredentials): void;
  /**
   * Stops accepting; lets requests in flight finish (HTTP/2 sessions get GOAWAY,
   * idle HTTP/1.1 connections close); after `graceMs` remaining connections are
   * cut. Resolves when every connection is closed.
   */
  close(graceMs?: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** How long a session's connection stays open after its GOAWAY for the peer to close it. */
const GOAWAY_GRACE_MS = 1000;

/**
 * HTTP/1.1: once an answer is written, the rest of its request's body must arrive within `graceMs`
 * (the headers timeout; Node reads and discards it to reuse the connection), else the connection is closed. So a client
 * that never finishes a body it was answered for (a 401 to an unauthenticated upload, a refusal)
 * holds no connection until the request timeout, which on the registry is long (for large uploads).
 */
function endsAbandonedRequests(handler: Handler, graceMs: number): Handler {
  return (req, res) => {
    if (req.httpVersionMajor === 1) {
      res.once("finish", () => {
        if (req.complete) return;
        const socket = req.socket;
        setTimeout(() => {
          if (!req.complete && !socket.destroyed) socket.destroy();
        }, graceMs).unref();
      });
    }
    return handler(req, res);
  };
}

/**
 * Every request's one catch: a handler that throws or rejects is answered by `failed`, and the
 * listener keeps serving. Nothing a route throws reaches the process as an uncaught exception or
 * an unhandled rejection.
 */
function answeringFailures(handler: Handler, failed: FailureAnswer): Handler {
  const fail = (error: unknown, req: Request, res: Response) => {
    try {
      failed(error, req, res);
    } catch {
      res.destroy();
    }
  };
  return (req, res) => {
    let answered: void | Promise<void>;
    try {
      answered = handler(req, res);
    } catch (error) {
      return fail(error, req, res);
    }
    answered?.catch((error: unknown) => fail(error, req, res));
  };
}

/** Ends an answer that cannot be finished, so the client sees it incomplete: HTTP/1.1 closes the connection, HTTP/2 resets the stream with INTERNAL_ERROR. */
export function cutShort(res: Response | NodeResponse): void {
  if ("stream" in res) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else res.destroy();
}

/** The failure answer when a listener is given none: a bare 500, or the answer cut short once begun. */
export const bareFailure: FailureAnswer = (_error, _req, res) => {
  if (res.headersSent) cutShort(res);
  else res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "content-length": "22" }).end("internal server error\n");
};

/**
 * One port for HTTP/1.1 and HTTP/2. In cleartext (no `credentials`), HTTP/2 is prior knowledge
 * (as gRPC uses): the first bytes of each connection decide which server gets it. With TLS,
 * ALPN decides: `h2` is HTTP/2, `http/1.1` or none is HTTP/1.1. Every stage of a connection
 * is bounded in time (see `ListenerLimits`; the TLS handshake by the headers timeout), and so
 * is their number. `failed`: how a request whose handler threw or rejected is answered (logged, 500); by default `bareFailure`.
 */
export function createDualListener(served: Handler, limits: ListenerLimits, credentials?: TlsCredentials, failed: FailureAnswer = bareFailure): DualListener {
  const headersTimeoutMs = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  /** How long the rest of a body may take once its request was answered: as long as a slow client's headers. */
  const answeredGraceMs = headersTimeoutMs;
  const handler = endsAbandonedRequests(answeringFailures(served, failed), answeredGraceMs);
  const h1 = http.createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 4)),
    },
    handler,
  );
  h1.timeout = limits.idleTimeoutMs;
  // Node checks the header and request timeouts only on a server that emitted
  // 'listening'. This one never listens (it gets sockets from the port below),
  // so it is told it does: that starts the connection tracking and its checks.
  h1.emit("listening");
  const h2 = http2.createServer(
    {
      maxSessionMemory: 64,
      settings: { maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxHeaderBytes },
      maxSendHeaderBlockLength: limits.maxHeaderBytes,
    },
    handler,
  );
  /** The open HTTP/2 sessions, each with the connection it runs on. */
  const sessions = new Map<http2.ServerHttp2Session, net.Socket | undefined>();
  /** The connection `h2` is being given: its 'session' event comes while it takes it. */
  let taking: net.Socket | undefined;
  const toH2 = (socket: net.Socket) => {
    taking = socket;
    h2.emit("connection", socket);
    taking = undefined;
  };
  /** The HTTP/2 streams whose request has not all arrived, by when it must have. */
  const receipts = new SweptDeadlines<http2.ServerHttp2Stream>(limits.requestTimeoutMs, (stream) => stream.close(http2.constants.NGHTTP2_CANCEL));
  /**
   * Connections of sessions sent GOAWAY, by when they are cut: a peer that takes the GOAWAY closes at
   * once, one that never reads (Node's graceful end waits for its FIN) would otherwise hold a slot.
   */
  const ending = new SweptDeadlines<net.Socket>(GOAWAY_GRACE_MS, (socket) => socket.destroy());
  /** The HTTP/2 sessions with no stream open since one ended, by when they are closed (GOAWAY, then `ending`). */
  const idle = new SweptDeadlines<http2.ServerHttp2Session>(limits.keepAliveTimeoutMs, (session) => {
    session.close();
    const socket = sessions.get(session);
    if (socket && !socket.destroyed) ending.set(socket, GOAWAY_GRACE_MS);
  });
  h2.on("session", (session) => {
    const socket = taking;
    sessions.set(session, socket);
    socket?.once("close", () => ending.delete(socket));
    // No stream open: the first request's headers must come within the headers
    // timeout, a later one within the keep-alive timeout (then GOAWAY).
    let open = 0;
    let first: NodeJS.Timeout | undefined = setTimeout(() => session.destroy(), headersTimeoutMs);
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      if (open++ === 0) {
        clearTimeout(first);
        first = undefined;
        idle.delete(session);
      }
      // The request (headers and body) must arrive within the request timeout; an answer may take
      // longer. Once answered, the rest of the body is not wanted: what has arrived is read, and a
      // body still coming is stopped with RST_STREAM NO_ERROR (RFC 9113, 8.1), as HTTP/1.1 closes.
      if (!stream.endAfterHeaders) {
        receipts.set(stream, limits.requestTimeoutMs);
        stream.once("end", () => receipts.delete(stream));
        stream.once("finish", () => {
          if (stream.readableEnded || stream.closed) return;
          stream.resume();
          setImmediate(() => {
            if (!stream.readableEnded && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
          });
        });
      }
      stream.once("close", () => {
        receipts.delete(stream);
        if (--open === 0 && !session.closed && !session.destroyed) idle.set(session, limits.keepAliveTimeoutMs);
      });
    });
    session.on("close", () => {
      clearTimeout(first);
      idle.delete(session);
      sessions.delete(session);
    });
  });
  /** Connections whose first bytes have not arrived yet. */
  const undecided = new Set<net.Socket>();
  const all = new Set<net.Socket>();

  // TLS: this server never listens; it gets each accepted socket, and its handshake timeout
  // bounds the time to the first bytes. A failed handshake destroys the socket.
  const secure = credentials === undefined ? undefined : tls.createServer({ ...credentials, ALPNProtocols: ["h2", "http/1.1"], handshakeTimeout: headersTimeoutMs });
  secure?.on("secureConnection", (socket: tls.TLSSocket) => (socket.alpnProtocol === "h2" ? toH2(socket) : h1.emit("connection", socket)));
  secure?.on("tlsClientError", () => {});

  const server = net.createServer((socket) => {
    all.add(socket);
    if (secure) {
      socket.on("close", () => all.delete(socket));
      socket.on("error", () => socket.destroy());
      secure.emit("connection", socket);
      return;
    }
    undecided.add(socket);
    // A connection that does not send its first bytes (all of the HTTP/2 preface) in time is closed.
    const peekTimer = setTimeout(() => socket.destroy(), headersTimeoutMs);
    socket.on("close", () => {
      clearTimeout(peekTimer);
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
      clearTimeout(peekTimer);
      socket.off("data", onData);
      undecided.delete(socket);
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        // The HTTP/2 session drains the buffered bytes, then reads the handle natively.
        toH2(socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  // Beyond the limit, a new connection is closed as soon as it is accepted.
  server.maxConnections = limits.maxConnections;

  return {
    server,
    setCredentials(next) {
      if (!secure) throw new Error("setCredentials: this listener is cleartext");
      secure.setSecureContext({ ...next });
    },
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        // Answers after this point tell HTTP/1.1 clients the connection is ending.
        h1.on("request", (_req, res) => res.setHeader("connection", "close"));
        for (const socket of undecided) socket.destroy();
        for (const session of sessions.keys()) session.close();
        const sweep = setInterval(() => h1.closeIdleConnections(), 25);
        const force = setTimeout(() => {
          for (const socket of all) socket.destroy();
        }, graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(force);
          // Stops the connection checks started above.
          h1.close();
          resolve();
        });
        h1.closeIdleConnections();
      });
    },
  };
}
