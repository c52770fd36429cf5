import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./test-server.js";
import { waitFor } from "./wait-for.js";

/**
 * The CNCF distribution registry as Debian packages it (`docker-registry`, 2.8), run as an upstream
 * registry on a free loopback port with its own storage folder: plain, or with TLS and htpasswd
 * basic authentication. `.ci/run` installs it and sets REQUIRE_DOCKER_REGISTRY=1, so that in CI its
 * absence fails instead of skipping.
 */
export const DOCKER_REGISTRY = "/usr/bin/docker-registry";
const missing = spawnSync(DOCKER_REGISTRY, ["--version"]).status !== 0;
if (missing && process.env.REQUIRE_DOCKER_REGISTRY === "1") throw new Error("docker-registry is required (REQUIRE_DOCKER_REGISTRY=1) but not installed: apt-get install docker-registry");

/** A reason to skip, or undefined when docker-registry is installed. */
export const dockerRegistrySkip = missing ? "docker-registry is not installed (apt-get install docker-registry); .ci/run installs it" : undefined;

/** A bcrypt hash (cost 4, as htpasswd -B -C 4 writes it) of TEST_HTPASSWD_PASSWORD: distribution's htpasswd file takes bcrypt only. */
export const TEST_HTPASSWD_PASSWORD = "upstream-secret";
const TEST_HTPASSWD_HASH = "$2y$04$UMSF4J4BAaAGufzMGWU4hOPXMnvMD6rKiOXLeaa31e05jD4NSl756";

export interface DockerRegistry {
  port: number;
  /** `http(s)://127.0.0.1:<port>`. */
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `docker-registry serve` in `dir`; with `tls`, over https with that certificate; with `user`, htpasswd basic auth for `user` / TEST_HTPASSWD_PASSWORD. */
export async function startDockerRegistry(dir: string, options: { tls?: { cert: string; key: string }; user?: string } = {}): Promise<DockerRegistry> {
  mkdirSync(join(dir, "storage"), { recursive: true });
  const port = await freePort();
  const lines = [
    "version: 0.1",
    "log:",
    "  level: error",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${join(dir, "storage")}`,
    "  delete:",
    "    enabled: true",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    ...(options.tls ? ["  tls:", `    certificate: ${options.tls.cert}`, `    key: ${options.tls.key}`] : []),
  ];
  if (options.user !== undefined) {
    writeFileSync(join(dir, "htpasswd"), `${options.user}:${TEST_HTPASSWD_HASH}\n`);
    lines.push("auth:", "  htpasswd:", "    realm: upstream", `    path: ${join(dir, "htpasswd")}`);
  }
  writeFileSync(join(dir, "config.yml"), `${lines.join("\n")}\n`);
  const child = spawn(DOCKER_REGISTRY, ["serve", join(dir, "config.yml")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `${options.tls ? "https" : "http"}://127.0.0.1:${port}`;
  await waitFor(`docker-registry on ${url}`, async () => {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
    const answered = await import("node:net").then(
      (net) =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect(port, "127.0.0.1", () => {
            socket.destroy();
            resolve(true);
          });
          socket.on("error", () => resolve(false));
        }),
    );
    return answered;
  });
  return {
    port,
    url,
    child,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
