import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";

export interface HealthOptions {
  /** Whether the server's dependencies (e.g. its store) work; throwing counts as false. */
  check: () => Promise<boolean> | boolean;
  /** Service names answered besides "" (the server as a whole); all share its status. */
  services: string[];
}

export interface HealthControl {
  /** Marks the server (un)available, e.g. false at shutdown; Watch streams see the change. */
  setServing(serving: boolean): void;
}

/**
 * Serves `grpc.health.v1.Health`. A service's status is SERVING while setServing(false) has
 * not been called (or was undone) and `check()` returns true; otherwise NOT_SERVING.
 * Check and List call `check()` per request. Watch sends the current status, then the new one
 * whenever setServing changes the serving flag and the result differs; when the call's signal
 * aborts (client cancel, deadline, or the adapter's `shutdownSignal`) it ends with the abort
 * reason as its error, so abort `shutdownSignal` with a ConnectError of Code.Unavailable.
 * Check of an unknown service fails with NOT_FOUND; Watch of one sends SERVICE_UNKNOWN and stays
 * open.
 */
export function registerHealth(router: ConnectRouter, opts: HealthOptions): HealthControl {
  const known = new Set(["", ...opts.services]);
  const listeners = new Set<() => void>();
  let serving = true;

  const status = async (): Promise<Status> => {
    if (!serving) return Status.NOT_SERVING;
    try {
      return (await opts.check()) ? Status.SERVING : Status.NOT_SERVING;
    } catch {
      return Status.NOT_SERVING;
    }
  };

  router.service(Health, {
    async check(request) {
      if (!known.has(request.service)) {
        throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      }
      return { status: await status() };
    },
    async list() {
      const current = await status();
      const statuses: Record<string, { status: Status }> = {};
      for (const name of known) statuses[name] = { status: current };
      return { statuses };
    },
    async *watch(request, { signal }) {
      let wake: (() => void) | undefined;
      let changed = false;
      const onChange = (): void => {
        changed = true;
        wake?.();
      };
      const onAbort = (): void => wake?.();
      listeners.add(onChange);
      signal.addEventListener("abort", onAbort);
      try {
        let sent: Status | undefined;
        while (!signal.aborted) {
          changed = false;
          const current = known.has(request.service) ? await status() : Status.SERVICE_UNKNOWN;
          if (current !== sent && !signal.aborted) {
            sent = current;
            yield create(HealthCheckResponseSchema, { status: current });
          }
          if (!changed && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
        throw ConnectError.from(signal.reason);
      } finally {
        listeners.delete(onChange);
        signal.removeEventListener("abort", onAbort);
      }
    },
  });

  return {
    setServing(next) {
      if (next === serving) return;
      serving = next;
      listeners.forEach((notify) => notify());
    },
  };
}
