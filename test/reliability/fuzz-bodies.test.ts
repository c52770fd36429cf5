import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, test } from "node:test";
import { fromBinary, fromJson, toBinary, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { sql } from "kysely";
import fc from "fast-check";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_service_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_service_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_service_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { methodOf } from "../support/wires.js";

/**
 * Fuzzing the request bodies of write RPCs (CreateGroup, UpdateGroup, CreateRepo,
 * CreateTag, CreateRole) on a real server, over the real wires: REST and Connect
 * with arbitrary JSON and mutations of valid bodies (wrong types, nulls, huge
 * strings, deep nesting, unicode, unknown fields, broken JSON, raw bytes);
 * Connect-proto (`application/proto`) and gRPC (length-prefixed frames over
 * node:http2) with arbitrary bytes and mutations of valid encodings (flipped,
 * cut and inserted bytes, stray fields, wrong frame flags and lengths).
 * Properties, for every call:
 * - a failed call changes nothing (row counts of every table it could touch, and
 *   the group UpdateGroup targets, are the same before and after);
 * - no answer is a server error (HTTP 5xx, INTERNAL, UNKNOWN);
 * - every error carries a google.rpc.ErrorInfo.
 * The first is asserted by fast-check (with shrinking); the other two are
 * collected over the same run and asserted per wire, with an example input.
 *
 * Reproduce: FUZZ_SEED=<seed printed by the run> (and FUZZ_RUNS=<n>, default 60
 * per wire) node scripts/run-tests.mjs test/reliability/fuzz-bodies.test.ts
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
if (!Number.isInteger(SEED)) throw new Error("FUZZ_SEED must be an integer");
const MAX_BODY = 64 * 1024;

let server: TestServer;
let target: string;
let repoUid: string;
let cases: Case[];

interface Case {
  method: DescMethod;
  /** A valid request, as proto JSON. */
  valid: JsonObject;
  rest: { method: string; path: string; bodyField: string };
}

before(async () => {
  server = await startTestServer({ limits: { maxBodyBytes: MAX_BODY } });
  const org = server.org.uid;
  const post = async (path: string, body: JsonObject) => {
    const res = await fetch(`${server.apiUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as JsonObject).uid as string;
  };
  target = await post(`/iam/v2/groups/${org}`, { name: "target", description: "kept" });
  repoUid = await post(`/registry/v2/repos/${org}`, { name: "fuzzed" });
  const digest = `sha256:${"ab".repeat(32)}`;
  cases = [
    { method: methodOf(GroupsService, "CreateGroup"), valid: { parent: org, group: { name: "g", description: "d" } }, rest: { method: "POST", path: `/iam/v2/groups/${org}`, bodyField: "group" } },
    {
      method: methodOf(GroupsService, "UpdateGroup"),
      valid: { group: { uid: target, name: "target", description: "changed" }, updateMask: "description" },
      rest: { method: "PATCH", path: `/iam/v2/groups/${target}`, bodyField: "group" },
    },
    { method: methodOf(ReposService, "CreateRepo"), valid: { parent: org, repo: { name: "r", description: "d" } }, rest: { method: "POST", path: `/registry/v2/repos/${org}`, bodyField: "repo" } },
    { method: methodOf(TagsService, "CreateTag"), valid: { parent: repoUid, tag: { name: "t", digest } }, rest: { method: "POST", path: `/registry/v2/tags/${repoUid}`, bodyField: "tag" } },
    {
      method: methodOf(RolesService, "CreateRole"),
      valid: { parent: org, role: { name: "r", description: "d", capabilities: ["CAP_IAM_GROUPS_LIST"] } },
      rest: { method: "POST", path: `/iam/v2/roles/${org}`, bodyField: "role" },
    },
  ];
});
after(() => server.close());

// ---- what the server holds: a failed call must leave it as it was ----

async function snapshot(): Promise<string> {
  const tables = ["groups", "repos", "tags", "tag_history", "roles", "role_capabilities", "role_bindings", "identities"];
  const counts = await Promise.all(
    tables.map(async (t) => (await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(server.store.db)).rows[0].n),
  );
  const group = await server.store.db.selectFrom("groups").selectAll().where("uid", "=", target).executeTakeFirst();
  return JSON.stringify({ counts: Object.fromEntries(tables.map((t, i) => [t, counts[i]])), group });
}

// ---- answers, the same shape for every wire ----

interface Answer {
  ok: boolean;
  /** HTTP status, and the gRPC code name or number when the call failed. */
  httpStatus: number;
  code?: string | number;
  message?: string;
  hasErrorInfo: boolean;
}

const SERVER_ERROR_CODES = new Set<string | number>(["internal", "unknown", 13, 2, "13", "2"]);
const isServerError = (a: Answer) => a.httpStatus >= 500 || (a.code !== undefined && SERVER_ERROR_CODES.has(a.code));

async function httpCall(path: string, method: string, contentType: string, body: Uint8Array): Promise<{ status: number; json: JsonObject | undefined }> {
  const res = await fetch(`${server.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": contentType },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  let json: JsonObject | undefined;
  try {
    json = JSON.parse(text) as JsonObject;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** REST: errors are google.rpc.Status JSON with `details[].@type`. */
async function restCall(c: Case, body: Uint8Array): Promise<Answer> {
  const { status, json } = await httpCall(c.rest.path, c.rest.method, "application/json", body);
  if (status < 300) return { ok: true, httpStatus: status, hasErrorInfo: false };
  const details = (json?.details as JsonObject[] | undefined) ?? [];
  return { ok: false, httpStatus: status, code: json?.code as number, message: json?.message as string, hasErrorInfo: details.some((d) => String(d["@type"]).endsWith("google.rpc.ErrorInfo")) };
}

/** Connect unary: errors are `{code, message, details: [{type, value}]}` JSON whatever the codec. */
async function connectCall(c: Case, body: Uint8Array, contentType: "application/json" | "application/proto"): Promise<Answer> {
  const { status, json } = await httpCall(`/${c.method.parent.typeName}/${c.method.name}`, "POST", contentType, body);
  if (status === 200) return { ok: true, httpStatus: status, hasErrorInfo: false };
  const details = (json?.details as JsonObject[] | undefined) ?? [];
  return { ok: false, httpStatus: status, code: json?.code as string, message: json?.message as string, hasErrorInfo: details.some((d) => d.type === "google.rpc.ErrorInfo") };
}

let session: http2.ClientHttp2Session | undefined;

/** gRPC over HTTP/2 with a body of raw bytes (frames made by the caller); the status is in the trailers (or trailers-only headers). */
function grpcCall(c: Case, body: Uint8Array): Promise<Answer> {
  if (!session || session.closed || session.destroyed) session = http2.connect(server.apiUrl);
  const s = session;
  return new Promise((resolve, reject) => {
    const stream = s.request({
      ":method": "POST",
      ":path": `/${c.method.parent.typeName}/${c.method.name}`,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${server.ownerToken}`,
    });
    const meta: Record<string, unknown> = {};
    let httpStatus = 0;
    stream.on("response", (headers) => {
      httpStatus = Number(headers[":status"]);
      Object.assign(meta, headers);
    });
    stream.on("trailers", (trailers) => Object.assign(meta, trailers));
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("end", () => {
      const code = meta["grpc-status"] === undefined ? undefined : Number(meta["grpc-status"]);
      const raw = meta["grpc-status-details-bin"] as string | undefined;
      let hasErrorInfo = false;
      if (raw) {
        const status = fromBinary(StatusSchema, Buffer.from(raw, "base64"));
        hasErrorInfo = status.details.some((d) => d.typeUrl.endsWith("google.rpc.ErrorInfo"));
      }
      const message = meta["grpc-message"] === undefined ? undefined : decodeURIComponent(String(meta["grpc-message"]));
      resolve({ ok: code === 0, httpStatus, code, message, hasErrorInfo });
    });
    stream.end(body);
  });
}

/** gRPC-Web over HTTP/1.1 with a body of raw bytes (frames made by the caller); the status is in the trailer frame (flag 0x80). */
async function grpcWebCall(c: Case, body: Uint8Array): Promise<Answer> {
  const res = await fetch(`${server.apiUrl}/${c.method.parent.typeName}/${c.method.name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.ownerToken}`, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
    body: new Uint8Array(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const trailer = new Map<string, string>();
  for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1)) {
    if ((bytes[at] & 0x80) === 0) continue;
    for (const line of bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1)).toString("utf8").split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) trailer.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
  }
  const status = trailer.get("grpc-status") ?? res.headers.get("grpc-status") ?? undefined;
  const code = status === undefined ? undefined : Number(status);
  const raw = trailer.get("grpc-status-details-bin");
  const hasErrorInfo = raw !== undefined && fromBinary(StatusSchema, Buffer.from(raw, "base64")).details.some((d) => d.typeUrl.endsWith("google.rpc.ErrorInfo"));
  const message = trailer.get("grpc-message");
  return { ok: code === 0, httpStatus: res.status, code, message: message === undefined ? undefined : decodeURIComponent(message), hasErrorInfo };
}

// ---- inputs ----

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));
const MARK = "\u0000fuzz-mark\u0000";

/** A JSON text fragment: odd values in place of a field's value. */
const oddValue: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom("null", "true", "0", "-1", "1e308", "-0", "[]", "{}", '""', "18446744073709551616", "1.5"),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => JSON.stringify(s)),
  // Lone surrogates, escaped: valid JSON, not valid UTF-16 text.
  fc.constantFrom('"\\ud800"', '"a\\udfff"', '"\\u0000"'),
  fc.integer({ min: 1_000, max: 2 * MAX_BODY }).map((n) => JSON.stringify("x".repeat(n))),
  fc.integer({ min: 50, max: 20_000 }).map((depth) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth)),
  fc.integer({ min: 50, max: 20_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
);

/** Key paths of a JSON object (its fields and their fields). */
function pathsOf(value: JsonObject, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, v]) => {
    const path = [...prefix, key];
    return v !== null && typeof v === "object" && !Array.isArray(v) ? [path, ...pathsOf(v, path)] : [path];
  });
}

/** `valid` with the value at `path` (or a new key `extra` under it) replaced by the JSON text `fragment`. */
function withFragment(valid: JsonObject, path: string[], fragment: string, extra?: string): string {
  const copy = structuredClone(valid);
  let node: JsonObject = copy;
  for (const key of path.slice(0, -1)) node = node[key] as JsonObject;
  if (extra === undefined) node[path.at(-1)!] = MARK;
  else if (typeof node[path.at(-1)!] === "object" && node[path.at(-1)!] !== null) (node[path.at(-1)!] as JsonObject)[extra] = MARK;
  else node[extra] = MARK;
  return JSON.stringify(copy).replace(JSON.stringify(MARK), () => fragment);
}

/** JSON request bodies: anything, or a valid body (`valid`) mutated. */
function jsonBodies(valid: JsonObject): fc.Arbitrary<Uint8Array> {
  const paths = pathsOf(valid);
  const text = JSON.stringify(valid);
  return fc.oneof(
    fc.jsonValue().map((v) => utf8(JSON.stringify(v) ?? "null")),
    fc.tuple(fc.constantFrom(...paths), oddValue).map(([path, fragment]) => utf8(withFragment(valid, path, fragment))),
    fc.tuple(fc.constantFrom(...paths), fc.string({ maxLength: 12 }), oddValue).map(([path, key, fragment]) => utf8(withFragment(valid, path, fragment, key))),
    fc.nat({ max: text.length }).map((cut) => utf8(text.slice(0, cut))),
    fc.string({ maxLength: 60 }).map(utf8),
    fc.uint8Array({ maxLength: 60 }),
  );
}

/** Protobuf request messages: arbitrary bytes, or a valid encoding (`valid`) mutated. */
function protoBodies(valid: Uint8Array): fc.Arbitrary<Uint8Array> {
  const splice = (at: number, remove: number, insert: Uint8Array) =>
    new Uint8Array([...valid.subarray(0, at), ...insert, ...valid.subarray(Math.min(valid.length, at + remove))]);
  const varint = (n: number) => {
    const out: number[] = [];
    for (; n > 0x7f; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
    out.push(n);
    return out;
  };
  return fc.oneof(
    fc.uint8Array({ maxLength: 80 }),
    fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => splice(at, 1, new Uint8Array([byte]))),
    fc.nat({ max: valid.length }).map((cut) => valid.slice(0, cut)),
    fc.tuple(fc.nat({ max: valid.length }), fc.uint8Array({ minLength: 1, maxLength: 12 })).map(([at, bytes]) => splice(at, 0, bytes)),
    // A stray field: any number, any wire type, then some bytes.
    fc
      .tuple(fc.integer({ min: 1, max: 2 ** 29 - 1 }), fc.integer({ min: 0, max: 7 }), fc.uint8Array({ maxLength: 16 }))
      .map(([field, wire, rest]) => new Uint8Array([...valid, ...varint(field * 8 + wire), ...rest])),
    // A string field claiming more bytes than there are, or holding invalid UTF-8.
    fc.constantFrom(new Uint8Array([...valid, 0x0a, 0xff, 0xff, 0xff, 0x0f]), new Uint8Array([0x0a, 0x02, 0xc3, 0x28])),
  );
}

/** gRPC bodies: one frame around a message, or broken framing. */
function grpcBodies(message: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const frame = (flag: number, length: number, payload: Uint8Array) => {
    const head = Buffer.alloc(5);
    head.writeUInt8(flag, 0);
    head.writeUInt32BE(length >>> 0, 1);
    return new Uint8Array([...head, ...payload]);
  };
  return fc.oneof(
    { arbitrary: message.map((m) => frame(0, m.length, m)), weight: 4 },
    fc.tuple(fc.integer({ min: 1, max: 255 }), message).map(([flag, m]) => frame(flag, m.length, m)),
    fc.tuple(fc.nat(), message).map(([length, m]) => frame(0, length, m)),
    fc.tuple(message, message).map(([a, b]) => new Uint8Array([...frame(0, a.length, a), ...frame(0, b.length, b)])),
    fc.uint8Array({ maxLength: 7 }),
  );
}

// ---- the runs ----

interface Finding {
  rpc: string;
  answer: Answer;
  body: string;
}

const show = (body: Uint8Array) => (body.length > 120 ? `${Buffer.from(body.subarray(0, 120)).toString("hex")}… (${body.length} bytes)` : Buffer.from(body).toString("hex"));

/**
 * Runs the property over `inputs` (a case and a body) through `call`: a failed
 * call changes nothing. Returns the answers that were server errors or lacked an
 * ErrorInfo.
 */
async function fuzz(
  inputs: (c: Case) => fc.Arbitrary<Uint8Array>,
  call: (c: Case, body: Uint8Array) => Promise<Answer>,
): Promise<{ serverErrors: Finding[]; withoutErrorInfo: Finding[]; calls: number; failed: number }> {
  const found = { serverErrors: [] as Finding[], withoutErrorInfo: [] as Finding[], calls: 0, failed: 0 };
  const arbitrary = fc.constantFrom(...cases).chain((c) => inputs(c).map((body) => ({ c, body })));
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ c, body }) => {
      const before = await snapshot();
      const answer = await call(c, body);
      found.calls++;
      if (answer.ok) return;
      found.failed++;
      const finding = { rpc: c.method.name, answer, body: show(body) };
      if (isServerError(answer)) found.serverErrors.push(finding);
      if (!answer.hasErrorInfo) found.withoutErrorInfo.push(finding);
      assert.equal(await snapshot(), before, `a failed ${c.method.name} (${answer.code}: ${answer.message}) changed the store`);
    }),
    { seed: SEED, numRuns: RUNS },
  );
  return found;
}

/** The distinct kinds among `findings` (code and message start), each with one example. */
function summary(findings: Finding[]): string {
  const kinds = new Map<string, Finding>();
  for (const f of findings) kinds.set(`${f.answer.httpStatus} ${f.answer.code} ${String(f.answer.message).slice(0, 50)}`, f);
  return [...kinds].map(([kind, f]) => `${kind} (e.g. ${f.rpc} ${f.body})`).join("\n");
}

interface Wire {
  name: string;
  inputs: (c: Case) => fc.Arbitrary<Uint8Array>;
  call: (c: Case, body: Uint8Array) => Promise<Answer>;
}

const encoded = (c: Case) => toBinary(c.method.input, fromJson(c.method.input, c.valid));

const wires: Wire[] = [
  { name: "REST (JSON over HTTP/1.1)", inputs: (c) => jsonBodies(c.valid[c.rest.bodyField] as JsonObject), call: restCall },
  {
    name: "Connect JSON (HTTP/1.1)",
    inputs: (c) => jsonBodies(c.valid),
    call: (c, body) => connectCall(c, body, "application/json"),
  },
  {
    name: "Connect proto (HTTP/1.1)",
    inputs: (c) => protoBodies(encoded(c)),
    call: (c, body) => connectCall(c, body, "application/proto"),
  },
  {
    name: "gRPC (frames over HTTP/2)",
    inputs: (c) => grpcBodies(protoBodies(encoded(c))),
    call: grpcCall,
  },
  { name: "gRPC-Web (frames over HTTP/1.1)", inputs: (c) => grpcBodies(protoBodies(encoded(c))), call: grpcWebCall },
];

for (const wire of wires) {
  describe(`fuzzed bodies over ${wire.name}`, { timeout: 60_000 }, () => {
    let found: Awaited<ReturnType<typeof fuzz>>;
    before(async () => {
      found = await fuzz(wire.inputs, wire.call);
    });
    after(() => session?.close());

    test("a failed call changes nothing", (t) => {
      t.diagnostic(`seed ${SEED}, ${found.calls} calls, ${found.failed} failed`);
      assert.ok(found.calls >= RUNS);
    });
    test("no answer is a server error (5xx, INTERNAL, UNKNOWN)", () => {
      assert.equal(found.serverErrors.length, 0, `seed ${SEED}:\n${summary(found.serverErrors)}`);
    });
    test("every error carries an ErrorInfo", () => {
      assert.equal(found.withoutErrorInfo.length, 0, `seed ${SEED}:\n${summary(found.withoutErrorInfo)}`);
    });
  });
}
