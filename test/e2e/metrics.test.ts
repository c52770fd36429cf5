import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { testDatabases } from "../support/databases.js";
import { hasSample, sampleSum, scrape } from "../support/prometheus-text.js";
import { serveOverWires } from "../support/over-wires.js";
import { methodOf } from "../support/wires.js";

const PING = { grpc_service: "platform.ping.v2.PingService", grpc_method: "Ping" };
const GET_GROUP = { grpc_service: "platform.iam.v2.GroupsService", grpc_method: "GetGroup" };

for (const database of await testDatabases()) {
  describe(`metrics on ${database.name}`, { skip: database.skip }, () => {
    const { server, wires } = serveOverWires({ database });

    test("counts each RPC by service, method, code and protocol, with its latency, on every wire", async () => {
      const missing = `${server().org.uid}/0123456789abcdef`;
      for (const wire of wires()) {
        const ok = await wire.call(methodOf(PingService, "Ping"), {}, { method: "GET", path: "/ping/v2/ping" });
        assert.equal(ok.code, 0, `${wire.name}: ${ok.message}`);
        const notFound = await wire.call(methodOf(GroupsService, "GetGroup"), { uid: missing }, { method: "GET", path: `/iam/v2/groups/${missing}` }, server().ownerToken);
        assert.equal(notFound.code, 5, `${wire.name}: ${notFound.message}`);
      }
      const { samples, contentType } = await scrape(server().metricsPort);
      assert.match(contentType, /^text\/plain; version=0\.0\.4/);
      for (const protocol of ["grpc", "connect", "grpc-web", "rest"]) {
        assert.equal(sampleSum(samples, "grpc_server_handled_total", { ...PING, grpc_code: "OK", protocol, grpc_type: "unary" }), 1, `Ping over ${protocol}`);
        assert.equal(sampleSum(samples, "grpc_server_handled_total", { ...GET_GROUP, grpc_code: "NOT_FOUND", protocol }), 1, `GetGroup over ${protocol}`);
      }
      assert.equal(sampleSum(samples, "grpc_server_started_total", PING), 4);
      assert.equal(sampleSum(samples, "grpc_server_handling_seconds_count", PING), 4);
      assert.equal(sampleSum(samples, "grpc_server_handling_seconds_count", GET_GROUP), 4);
      assert.ok(sampleSum(samples, "grpc_server_handling_seconds_sum", GET_GROUP) > 0);
      assert.equal(sampleSum(samples, "grpc_server_handling_seconds_bucket", { ...PING, le: "+Inf" }), 4);
      assert.equal(sampleSum(samples, "grpc_server_in_flight", PING), 0);
      // REST calls are plain HTTP requests too: counted by route and status.
      assert.equal(sampleSum(samples, "http_server_requests_total", { host: "api", route: "rest", method: "GET", status: "404" }), 1);
      assert.equal(sampleSum(samples, "http_server_requests_total", { host: "api", route: "rest", method: "GET", status: "200" }), 1);
    });

    test("counts plain HTTP requests on the API host by route: discovery, unknown paths", async () => {
      const before = (await scrape(server().metricsPort)).samples;
      assert.equal((await fetch(`${server().apiUrl}/.well-known/openid-configuration`)).status, 200);
      assert.equal((await fetch(`${server().apiUrl}/no/such/path`)).status, 404);
      const after = (await scrape(server().metricsPort)).samples;
      const delta = (labels: Record<string, string>) => sampleSum(after, "http_server_requests_total", labels) - sampleSum(before, "http_server_requests_total", labels);
      assert.equal(delta({ host: "api", route: "discovery", status: "200" }), 1);
      assert.equal(delta({ host: "api", route: "not_found", status: "404" }), 1);
      assert.equal(sampleSum(after, "http_server_requests_in_flight", { host: "api" }), 0);
    });

    test("counts registry requests by route and status, with their latency", async () => {
      const version = await fetch(`${server().registryUrl}/v2/`);
      const tags = await fetch(`${server().registryUrl}/v2/acme/nothing/tags/list`);
      const unknown = await fetch(`${server().registryUrl}/elsewhere`);
      const { samples } = await scrape(server().metricsPort);
      assert.equal(sampleSum(samples, "http_server_requests_total", { host: "registry", route: "version", method: "GET", status: String(version.status) }), 1);
      assert.equal(sampleSum(samples, "http_server_requests_total", { host: "registry", route: "tags_list", status: String(tags.status) }), 1);
      assert.equal(sampleSum(samples, "http_server_requests_total", { host: "registry", route: "unknown", status: String(unknown.status) }), 1);
      assert.equal(sampleSum(samples, "http_server_request_duration_seconds_count", { host: "registry" }), 3);
    });

    test("counts bytes served per host, and store query time by operation", async () => {
      const before = (await scrape(server().metricsPort)).samples;
      const body = await (await fetch(`${server().apiUrl}/ping/v2/ping`)).text();
      const after = (await scrape(server().metricsPort)).samples;
      const sent = (s: typeof after) => sampleSum(s, "http_server_sent_bytes_total", { host: "api" });
      assert.ok(sent(after) - sent(before) >= body.length, `${sent(after)} - ${sent(before)}`);
      assert.ok(sampleSum(after, "http_server_received_bytes_total", { host: "api" }) > 0);
      assert.ok(sampleSum(after, "http_server_sent_bytes_total", { host: "registry" }) > 0);
      assert.ok(sampleSum(after, "db_client_operation_duration_seconds_count", { operation: "select", outcome: "ok" }) > 0);
      assert.ok(sampleSum(after, "db_client_operation_duration_seconds_count", { operation: "insert", outcome: "ok" }) > 0);
      assert.ok(hasSample(after, "process_cpu_seconds_total"));
    });

    test(database.name === "postgres" ? "reports the PostgreSQL pool" : "reports no pool on SQLite (one connection)", async () => {
      const { samples } = await scrape(server().metricsPort);
      if (database.name === "postgres") {
        assert.equal(sampleSum(samples, "db_client_connections_max"), 10);
        assert.ok(sampleSum(samples, "db_client_connections", { state: "idle" }) + sampleSum(samples, "db_client_connections", { state: "used" }) >= 1);
        assert.equal(sampleSum(samples, "db_client_connections_pending_requests"), 0);
      } else {
        assert.ok(!hasSample(samples, "db_client_connections"));
        assert.ok(!hasSample(samples, "db_client_connections_max"));
      }
    });

    test("the metrics listener answers /metrics only", async () => {
      assert.equal((await fetch(`http://127.0.0.1:${server().metricsPort}/other`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${server().metricsPort}/metrics`, { method: "POST" })).status, 405);
      // Not on the API port: nothing operational is exposed there.
      assert.equal((await fetch(`${server().apiUrl}/metrics`)).status, 404);
    });
  });
}
