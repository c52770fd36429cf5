import { Code, ConnectError } from "@connectrpc/connect";
import { SweptDeadlines, sweepIntervalMs } from "../swept-deadlines.js";

/** The reason a call that answered ends with. */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/**
 * Deadlines this far off or farther (the server's 30 s cap on every call) are not timers of their
 * own: they are swept (`SweptDeadlines`), every SWEEP_MS (250 ms), so a call ends at most SWEEP_MS
 * after its deadline. Nearer deadlines (a caller's `grpc-timeout`) keep their timer.
 */
export const SWEPT_FROM_MS = 10_000;
export const SWEEP_MS = sweepIntervalMs(SWEPT_FROM_MS);

/**
 * The life of one unary call on a direct path: it ends when the caller goes away, at its
 * deadline, or once it has answered (`finish`), and the first reason wins.
 *
 * Its AbortSignal (the handler's `ctx.signal`) is made only when someone asks for it, already
 * aborted if the call has ended: a read never asks, and making an AbortSignal and aborting it
 * (an EventTarget and an event) costs more than the rest of this object. Whoever must stop
 * the call when it ends without holding the signal (the deadline's race) uses `race`, which
 * costs a promise, not a listener.
 */
export class CallLife {
  #controller: AbortController | undefined;
  #reason: unknown;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;
  /** When the deadline ends the call, epoch ms. */
  #deadlineAt = Infinity;
  /** The deadline's reason, when it is swept (not timed). */
  #sweptReason: (() => unknown) | undefined;
  #onEnd: ((reason: unknown) => void) | undefined;

  /** The lives with a swept deadline. */
  static readonly #swept = new SweptDeadlines<CallLife>(SWEPT_FROM_MS, (life) => life.end(life.#sweptReason!()));

  /** The call's signal: aborted with the reason the call ended for. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Why the call ended; undefined while it runs. */
  get reason(): unknown {
    return this.#reason;
  }

  /** Ends the call with `reason` (the caller left, a deadline): the signal, if made, aborts; `race` rejects. Later reasons are ignored. */
  end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reason = reason;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#sweptReason !== undefined) CallLife.#swept.delete(this);
    this.#controller?.abort(reason);
    const onEnd = this.#onEnd;
    this.#onEnd = undefined;
    onEnd?.(reason);
  }

  /** The call answered (or failed): ends it, its signal aborted with CANCELED, and releases its timer. */
  finish(): void {
    this.end(CALL_ENDED);
  }

  /**
   * Ends the call with `reason()` in `ms` (at once when `ms` <= 0), unless a deadline at least as
   * early is set already. Keeps one timer, whatever the number of deadlines; a deadline at least
   * SWEPT_FROM_MS off is swept instead, and ends the call up to SWEEP_MS after it.
   */
  deadlineIn(ms: number, reason: () => unknown): void {
    if (this.#ended) return;
    const at = Date.now() + ms;
    if (at >= this.#deadlineAt) return;
    if (ms <= 0) return this.end(reason());
    this.#deadlineAt = at;
    if (ms >= SWEPT_FROM_MS) {
      this.#sweptReason = reason;
      CallLife.#swept.set(this, ms);
      return;
    }
    if (this.#sweptReason !== undefined) {
      this.#sweptReason = undefined;
      CallLife.#swept.delete(this);
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.end(reason()), ms);
  }

  /**
   * Settles as `work` does, or rejects with `asError(reason)` as soon as the call ends first (at
   * once if it has ended). One race at a time.
   *
   * The race is joined at the check phase of the event loop's turn it started in (`setImmediate`),
   * by work still running then, and an end that came before is met there and rejects at once: a
   * deadline is a timer, which cannot fire sooner, and a caller leaving is I/O, so either is answered
   * within the same turn as before. Most calls have answered by then. Joining at once held the
   * race's reject function on this object for every call, which cost a GetGroup call over gRPC a
   * fifth of its CPU in collections (docs/performance.md).
   */
  race<T>(work: () => Promise<T>, asError: (reason: unknown) => unknown): Promise<T> {
    if (this.#ended) return Promise.reject(asError(this.#reason));
    let settled = false;
    return new Promise<T>((resolve, reject) => {
      work().then(
        (value) => {
          settled = true;
          this.#onEnd = undefined;
          resolve(value);
        },
        (error: unknown) => {
          settled = true;
          this.#onEnd = undefined;
          reject(error);
        },
      );
      setImmediate(() => {
        if (settled) return;
        if (this.#ended) reject(asError(this.#reason));
        else this.#onEnd = (reason) => reject(asError(reason));
      });
    });
  }
}
