import { Counter, Gauge, type Metric, type MetricType, type MetricObjectWithValues, type MetricValueWithName, type Registry } from "prom-client";

/**
 * Metrics updated on every call, whose update is a number's change: each label set's value lives
 * in a slot its caller finds once (per method, route, status...) and keeps, and prom-client reads
 * the slots when it is scraped. prom-client's own `inc` and `observe` build and hash a key of the
 * label values on every update, which cost an RPC's five updates a tenth of its CPU.
 * Exposition (names, help, label escaping, the text formats) stays prom-client's.
 */

type Labels<T extends string> = Record<T, string>;

interface MetricConfig<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  registers: Registry[];
}

/** One label set's value of a `SlotCounter`: change `value` (a counter's only grows). */
export interface Slot {
  value: number;
}

/** The slot of `labels` in `slots`, made the first time (by the label values, in `labelNames` order). */
function slotIn<T extends string, S>(slots: Map<string, { labels: Labels<T>; slot: S }>, labelNames: readonly T[], labels: Labels<T>, make: () => S): S {
  const key = labelNames.map((name) => labels[name]).join("\u0000");
  let entry = slots.get(key);
  if (entry === undefined) slots.set(key, (entry = { labels: { ...labels }, slot: make() }));
  return entry.slot;
}

/** A counter or gauge whose label sets are slots; prom-client's `Counter` or `Gauge` reads them at each scrape. */
export class SlotCounter<T extends string> {
  readonly #slots = new Map<string, { labels: Labels<T>; slot: Slot }>();
  readonly #labelNames: readonly T[];

  constructor(config: MetricConfig<T>, kind: "counter" | "gauge") {
    this.#labelNames = config.labelNames;
    const slots = this.#slots;
    const options = { name: config.name, help: config.help, labelNames: config.labelNames, registers: config.registers };
    if (kind === "counter") {
      new Counter<T>({
        ...options,
        collect() {
          this.reset();
          for (const { labels, slot } of slots.values()) this.inc(labels, slot.value);
        },
      });
    } else {
      new Gauge<T>({
        ...options,
        collect() {
          this.reset();
          for (const { labels, slot } of slots.values()) this.set(labels, slot.value);
        },
      });
    }
  }

  /** The slot of `labels` (the same slot for the same label values). */
  slot(labels: Labels<T>): Slot {
    return slotIn(this.#slots, this.#labelNames, labels, () => ({ value: 0 }));
  }
}

/** One label set's counts of a `SlotHistogram`. */
export class HistogramSlot {
  /** Observations at most each bound, not cumulative (the last: above every bound). */
  readonly #counts: Float64Array;
  #sum = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.#counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.#counts[i]++;
    this.#sum += value;
  }

  /** The cumulative count at each bound, then the total. */
  cumulative(): number[] {
    let total = 0;
    return Array.from(this.#counts, (n) => (total += n));
  }

  get sum(): number {
    return this.#sum;
  }

  reset(): void {
    this.#counts.fill(0);
    this.#sum = 0;
  }
}

/**
 * A histogram whose label sets are slots. The registry reads it as it reads any metric (`name`,
 * `help`, `type`, `aggregator`, `get`, `reset`): the values are prom-client's histogram values
 * (`_bucket` with `le`, `+Inf`, `_sum`, `_count`).
 */
export class SlotHistogram<T extends string> {
  /** The type the metrics registry writes (prom-client types it as a numeric enum it does not export; its metrics hold these strings). */
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly #labelNames: readonly T[];
  readonly #bounds: readonly number[];
  readonly #slots = new Map<string, { labels: Labels<T>; slot: HistogramSlot }>();

  constructor(config: MetricConfig<T> & { buckets: readonly number[] }) {
    this.name = config.name;
    this.help = config.help;
    this.#labelNames = config.labelNames;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The slot of `labels` (the same slot for the same label values). */
  slot(labels: Labels<T>): HistogramSlot {
    return slotIn(this.#slots, this.#labelNames, labels, () => new HistogramSlot(this.#bounds));
  }

  get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, slot } of this.#slots.values()) {
      const counts = slot.cumulative();
      const total = counts[counts.length - 1];
      this.#bounds.forEach((bound, i) => values.push({ labels: { ...labels, le: bound }, value: counts[i], metricName: `${this.name}_bucket` }));
      values.push({ labels: { ...labels, le: "+Inf" }, value: total, metricName: `${this.name}_bucket` });
      values.push({ labels, value: slot.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: total, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type as unknown as MetricType, values, aggregator: this.aggregator, collect: () => {} });
  }

  reset(): void {
    for (const { slot } of this.#slots.values()) slot.reset();
  }
}
