import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { BIN, inRepo } from "./repo.js";

const execFileAsync = promisify(execFile);
/** `platform-api` that kills itself after some writes: crash-after-writes.ts. */
const CRASHING = inRepo("test/support/crash-after-writes.ts");

/** The public URL a child server and its tokens use (issuer and audience). */
export const CHILD_API_URL = "http://platform.test";

/** Runs a `platform-api` command to its end; rejects on a non-zero exit. */
export async function runCli(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [BIN, ...args], {
    encoding: "utf8",
    // Generous: a CLI start (module loading, migrations under the database-wide lock) is slow on a loaded machine.
    timeout: 120_000,
    env: { ...process.env, DATABASE_URL: "", PORT: "", API_URL: "", METRICS_PORT: "0" },
  });
  return stdout;
}

export interface Bootstrapped {
  org: { uid: string; name: string };
  ownerUid: string;
  ownerToken: string;
}

/** `platform-api bootstrap` on `db`: an organization, its owner, and a token for `CHILD_API_URL`. */
export async function bootstrapChild(db: string, org: string): Promise<Bootstrapped> {
  const out = JSON.parse(await runCli("bootstrap", "--org", org, "--db", db, "--api-url", CHILD_API_URL)) as {
    organization: { uid: string; name: string };
    identity: { uid: string };
    token: string;
  };
  return { org: out.organization, ownerUid: out.identity.uid, ownerToken: out.token };
}

export interface ChildServer {
  child: ChildProcess;
  apiPort: number;
  registryPort: number;
  /** `http://127.0.0.1:<apiPort>` (https with TLS). */
  apiUrl: string;
  /** `http://127.0.0.1:<registryPort>` (https with TLS). */
  registryUrl: string;
  /** Resolves when the process has exited. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Everything it wrote to stdout (its log lines) so far. */
  stdout(): string;
}

/**
 * `platform-api serve` in a child process on `db` and `registryDir`, on free
 * loopback ports; resolves once it says where it listens. With
 * `crashAfterWrites`, the process SIGKILLs itself after that many writes
 * (test/support/crash-after-writes.ts). `args` are added to the command line, `env` to the
 * environment.
 */
export async function startChildServer(options: {
  db: string;
  registryDir: string;
  logLevel?: string;
  crashAfterWrites?: number;
  args?: string[];
  /** More environment variables (e.g. OTEL_*). */
  env?: Record<string, string>;
}): Promise<ChildServer> {
  const entry = options.crashAfterWrites === undefined ? [BIN] : ["--import", "tsx", CRASHING];
  const child = spawn(
    process.execPath,
    [
      ...entry,
      "serve",
      ...["--host", "127.0.0.1", "--port", "0", "--registry-port", "0"],
      ...["--db", options.db, "--registry-dir", options.registryDir, "--api-url", CHILD_API_URL],
      ...["--log-level", options.logLevel ?? "warn"],
      ...(options.args ?? []),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: "", PORT: "", API_URL: "", METRICS_PORT: "0", CRASH_AFTER_WRITES: String(options.crashAfterWrites ?? ""), ...options.env },
    },
  );
  let err = "";
  let out = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const [scheme, apiPort, registryPort] = await new Promise<[string, number, number]>((resolve, reject) => {
    const onData = () => {
      const match = /API on (https?):\/\/127\.0\.0\.1:(\d+), registry on https?:\/\/127\.0\.0\.1:(\d+),/.exec(err);
      if (match) {
        child.stderr!.off("data", onData);
        resolve([match[1], Number(match[2]), Number(match[3])]);
      }
    };
    child.stderr!.on("data", onData);
    void exit.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before listening: ${err}`)));
  });
  return {
    child,
    apiPort,
    registryPort,
    apiUrl: `${scheme}://127.0.0.1:${apiPort}`,
    registryUrl: `${scheme}://127.0.0.1:${registryPort}`,
    exit,
    stderr: () => err,
    stdout: () => out,
  };
}
