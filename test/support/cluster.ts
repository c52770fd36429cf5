import type { DescMethod, JsonObject } from "@bufbuild/protobuf";
import { startChildServer, type ChildServer } from "./child-server.js";
import { connectWire, grpcWire, restWire, type Outcome, type RestRequest, type Wire } from "./wires.js";

/**
 * Several `platform-api serve` processes on one database and one blob store: what an operator
 * runs behind a load balancer. Started together, as replicas of a deployment are.
 */
export interface Cluster {
  replicas: ChildServer[];
  /** Kills replica `i` with SIGKILL and waits for it to be gone. */
  kill(i: number): Promise<void>;
  /** SIGTERM to every replica still running; waits for them. */
  stop(): Promise<void>;
}

export const CLUSTER_REGISTRY_URL = "http://registry.test";

export async function startCluster(options: { size: number; db: string; registryStorage: string; env: Record<string, string>; args?: string[] }): Promise<Cluster> {
  const replicas = await Promise.all(
    Array.from({ length: options.size }, (_, i) =>
      startChildServer({
        db: options.db,
        registryDir: `/nonexistent/replica-${i}`,
        args: ["--registry-storage", options.registryStorage, "--registry-url", CLUSTER_REGISTRY_URL, ...(options.args ?? [])],
        env: options.env,
      }),
    ),
  );
  const gone = new Set<number>();
  return {
    replicas,
    async kill(i) {
      gone.add(i);
      replicas[i].child.kill("SIGKILL");
      await replicas[i].exit;
    },
    async stop() {
      await Promise.all(
        replicas.map(async (replica, i) => {
          if (gone.has(i)) return;
          replica.child.kill("SIGTERM");
          await replica.exit;
        }),
      );
    },
  };
}

/** One call's replica and outcome, as a round-robin wire saw it. */
export interface RoutedCall {
  replica: number;
  outcome: Outcome;
  /** Whether the server answered (an HTTP status or error details), rather than the connection failing. */
  answered: boolean;
  at: number;
}

/**
 * A wire that sends each call to the next replica in turn, over the protocols in turn (gRPC,
 * Connect, REST): a round-robin load balancer with clients of every kind. Every call is recorded.
 */
export function roundRobinWire(replicas: ChildServer[], calls: RoutedCall[] = []): Wire & { calls: RoutedCall[] } {
  const kinds = [grpcWire, connectWire, restWire];
  const wires = replicas.map((replica) => kinds.map((kind) => kind(replica.apiPort)));
  let next = 0;
  return {
    name: "grpc",
    calls,
    async call(method: DescMethod, request: JsonObject, rest: RestRequest, token?: string): Promise<Outcome> {
      const n = next++;
      const replica = n % replicas.length;
      const wire = wires[replica][Math.floor(n / replicas.length) % kinds.length];
      let outcome: Outcome;
      try {
        outcome = await wire.call(method, request, rest, token);
      } catch (error) {
        outcome = { code: -1, message: String(error), details: [] };
      }
      calls.push({ replica, outcome, answered: outcome.httpStatus !== undefined || outcome.details.length > 0, at: Date.now() });
      return outcome;
    },
    close() {
      for (const set of wires) for (const wire of set) wire.close();
    },
  };
}
