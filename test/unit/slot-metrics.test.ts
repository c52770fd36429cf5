// Slot metrics expose what prom-client's own metrics expose for the same updates: the same
// samples (names, labels, values) in both text formats' registries, and the same after a reset.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { SlotCounter, SlotHistogram } from "../../src/telemetry/slot-metrics.js";

/** Every sample of `registry` as `name{label="value",...} value`, labels sorted. */
async function samples(registry: Registry): Promise<string[]> {
  const out: string[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values as Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>) {
      const labels = Object.entries(v.labels)
        .map(([k, value]) => `${k}="${value}"`)
        .sort()
        .join(",");
      out.push(`${v.metricName ?? metric.name}{${labels}} ${v.value}`);
    }
  }
  return out.sort();
}

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0005, 0.001, 0.002, 0.05, 0.1, 0.5, 3, 10];

test("a slot histogram has prom-client's histogram samples: each bucket's cumulative count at its bound (a value at a bound counted in it), +Inf, sum, count", async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: "call_seconds", help: "h", labelNames: ["method", "code"], buckets: BUCKETS, registers: [theirs] });
  const slots = new SlotHistogram({ name: "call_seconds", help: "h", labelNames: ["method", "code"], buckets: BUCKETS, registers: [ours] });
  for (const [i, value] of OBSERVED.entries()) {
    const labels = { method: i % 2 ? "Get" : "List", code: "OK" };
    histogram.observe(labels, value);
    slots.slot({ ...labels }).observe(value);
  }
  assert.deepEqual(await samples(ours), await samples(theirs));
  assert.ok((await samples(ours)).includes('call_seconds_bucket{code="OK",le="0.001",method="Get"} 1'), "0.001 is counted at le=0.001");
  assert.match(await ours.metrics(), /# TYPE call_seconds histogram\ncall_seconds_bucket\{method="List",code="OK",le="0.001"\} 1\ncall_seconds_bucket\{method="List",code="OK",le="0.01"\} 2\n/);

  histogram.reset();
  for (const labels of [{ method: "Get", code: "OK" }, { method: "List", code: "OK" }]) histogram.zero(labels);
  ours.resetMetrics();
  assert.deepEqual(await samples(ours), await samples(theirs), "reset: every label set at zero");
});

test("slot counters and gauges have prom-client's samples; one slot per label values, whatever the object", async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const counter = new Counter({ name: "calls_total", help: "c", labelNames: ["method"], registers: [theirs] });
  const gauge = new Gauge({ name: "in_flight", help: "g", labelNames: ["method"], registers: [theirs] });
  const slotCounter = new SlotCounter({ name: "calls_total", help: "c", labelNames: ["method"], registers: [ours] }, "counter");
  const slotGauge = new SlotCounter({ name: "in_flight", help: "g", labelNames: ["method"], registers: [ours] }, "gauge");
  counter.inc({ method: "Get" }, 3);
  counter.inc({ method: "List" });
  gauge.inc({ method: "Get" }, 2);
  gauge.dec({ method: "Get" });
  slotCounter.slot({ method: "Get" }).value += 3;
  slotCounter.slot({ method: "List" }).value++;
  slotGauge.slot({ method: "Get" }).value += 2;
  slotGauge.slot({ method: "Get" }).value--;
  assert.equal(slotCounter.slot({ method: "Get" }), slotCounter.slot({ method: "Get" }));
  assert.deepEqual(await samples(ours), await samples(theirs));
  assert.deepEqual(await samples(ours), ['calls_total{method="Get"} 3', 'calls_total{method="List"} 1', 'in_flight{method="Get"} 1']);
});
