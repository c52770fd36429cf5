import { after, before, describe } from "node:test";
import { dropFresh, type TestDatabase } from "./databases.js";
import { startTestServer, type TestServer, type TestServerOptions } from "./test-server.js";
import { allWires, onEveryWire, WIRE_NAMES, type Outcome, type Wire, type WireName } from "./wires.js";

export interface ServeOptions extends TestServerOptions {
  /** The database to serve: its `fresh()` URL is the server's `dbUrl`, dropped after. */
  database?: TestDatabase;
  /** Runs once after the server starts, before the scope's tests (and its later `before` hooks). */
  prepare?(server: TestServer): Promise<void> | void;
}

/** A suite's title, or its title for one wire. */
export type WireTitle = string | ((wireName: WireName) => string);

/** What a suite over one wire is given; `server` and `wire` answer once the scope's `before` has run. */
export interface OverWire {
  wireName: WireName;
  server(): TestServer;
  wire(): Wire;
}

/** One test server and the four wires to it, for the tests of the scope that asked for them. */
export interface ServedWires {
  /** The running server; throws outside the scope's tests and hooks. */
  server(): TestServer;
  /** The four wires, in `WIRE_NAMES` order. */
  wires(): Wire[];
  wire(name: WireName): Wire;
  /** `onEveryWire` over these wires: the outcomes must agree; returns the first. */
  onEveryWire(call: (wire: Wire) => Promise<Outcome>): Promise<Outcome>;
  /**
   * One `describe` per wire of `wireNames` (default all four, in `WIRE_NAMES` order), titled
   * `${title} over ${wireName}` or `title(wireName)`, each declared by `body` with its wire.
   */
  describeOverWires(title: WireTitle, body: (over: OverWire) => void, wireNames?: readonly WireName[]): void;
}

/**
 * Starts a test server (`startTestServer(options)`, then `options.prepare`) in a `before` hook of
 * the calling scope (a file or a `describe`), opens the four wires to it, and closes the wires, the
 * server and a fresh `options.database` in an `after` hook.
 */
export function serveOverWires(options: ServeOptions = {}): ServedWires {
  const { database, prepare, ...start } = options;
  let server: TestServer | undefined;
  let wires: Wire[] = [];
  let dbUrl: string | undefined;
  before(async () => {
    if (database) dbUrl = await database.fresh();
    server = await startTestServer(dbUrl === undefined ? start : { ...start, dbUrl });
    wires = allWires(server.apiPort);
    await prepare?.(server);
  });
  after(async () => {
    for (const wire of wires) wire.close();
    await server?.close();
    if (dbUrl !== undefined) await dropFresh(dbUrl);
  });
  const served: ServedWires = {
    server() {
      if (!server) throw new Error("the test server runs only during the tests and hooks of the scope that serves it");
      return server;
    },
    wires: () => wires,
    wire(name) {
      const wire = wires.find((w) => w.name === name);
      if (!wire) throw new Error(`no ${name} wire: the test server runs only during the tests and hooks of the scope that serves it`);
      return wire;
    },
    onEveryWire: (call) => onEveryWire(wires, call),
    describeOverWires(title, body, wireNames = WIRE_NAMES) {
      for (const wireName of wireNames) {
        describe(typeof title === "string" ? `${title} over ${wireName}` : title(wireName), () =>
          body({ wireName, server: served.server, wire: () => served.wire(wireName) }),
        );
      }
    },
  };
  return served;
}

/**
 * `serveOverWires(options)` in the calling scope, and one `describe` per wire of it:
 * `${title} over ${wireName}` (or `title(wireName)`), declared by `body` with the server and its
 * wire. Returns the served server and wires, for tests of the scope outside those suites.
 */
export function describeOverWires(title: WireTitle, options: ServeOptions, body: (over: OverWire) => void): ServedWires {
  const served = serveOverWires(options);
  served.describeOverWires(title, body);
  return served;
}
