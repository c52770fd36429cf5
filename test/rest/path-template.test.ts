import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GroupsService } from "../../gen/platform/iam/v2/groups_service_pb.js";
import { PingService } from "../../gen/platform/ping/v2/ping_pb.js";
import { routesFromServices } from "../../src/transport/rest/http-rules.js";
import type { RestRoute } from "../../src/transport/rest/http-rules.js";
import { decodeCapture, MalformedEscapeError, matchPathTemplate, parsePathTemplate, PathTemplateSyntaxError, splitPath } from "../../src/transport/rest/path-template.js";
import { RouteTable } from "../../src/transport/rest/route-table.js";

/** The decoded captures, as the transcoder sets them. */
function match(template: string, path: string): Record<string, string> | undefined {
  const bindings = matchPathTemplate(parsePathTemplate(template), splitPath(path)!);
  return bindings && Object.fromEntries([...bindings].map(([k, v]) => [k, decodeCapture(v)]));
}

describe("path template matching", () => {
  const cases: { template: string; path: string; want: Record<string, string> | undefined }[] = [
    { template: "/iam/v2/groups", path: "/iam/v2/groups", want: {} },
    { template: "/iam/v2/groups", path: "/iam/v2/groups/", want: undefined },
    { template: "/iam/v2/groups/{uid}", path: "/iam/v2/groups/abc", want: { uid: "abc" } },
    { template: "/iam/v2/groups/{uid}", path: "/iam/v2/groups/abc/def", want: undefined },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups/abc", want: { uid: "abc" } },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups/abc/def/0123", want: { uid: "abc/def/0123" } },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups", want: undefined },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups/", want: undefined },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups/abc//def", want: undefined },
    { template: "/iam/v2/groups/{group.uid=**}", path: "/iam/v2/groups/a/b", want: { "group.uid": "a/b" } },
    { template: "/v1/{name=shelves/*/books/**}", path: "/v1/shelves/s1/books/b1/p2", want: { name: "shelves/s1/books/b1/p2" } },
    { template: "/v1/{name=shelves/*/books/**}", path: "/v1/shelves/s1/notes/b1", want: undefined },
    { template: "/v1/{name=shelves/*}/books", path: "/v1/shelves/s1/books", want: { name: "shelves/s1" } },
    { template: "/v1/{a}/x/{b=**}/y", path: "/v1/A/x/b1/b2/y", want: { a: "A", b: "b1/b2" } },
    { template: "/v1/*/things", path: "/v1/anything/things", want: {} },
    // custom verbs
    { template: "/iam/v2/groups/{uid=**}:redeem", path: "/iam/v2/groups/abc/def:redeem", want: { uid: "abc/def" } },
    { template: "/iam/v2/groups/{uid=**}:redeem", path: "/iam/v2/groups/abc/def", want: undefined },
    { template: "/iam/v2/groups/{uid=**}:redeem", path: "/iam/v2/groups/abc:other", want: undefined },
    { template: "/iam/v2/groups:search", path: "/iam/v2/groups:search", want: {} },
    { template: "/iam/v2/groups/{uid=**}", path: "/iam/v2/groups/abc:redeem", want: { uid: "abc:redeem" } },
    { template: "/v1/{name}:go", path: "/v1/:go", want: undefined },
    { template: "/v1/{a=**}/y:go", path: "/v1/b1/b2/y:go", want: { a: "b1/b2" } },
    { template: "/v1/{a=**}/y:go", path: "/v1/b1/b2/y", want: undefined },
    { template: "/v1/{a}/{b=**}:go", path: "/v1/A/b1/b2:go", want: { a: "A", b: "b1/b2" } },
    // captures are raw: %2F never separates segments, decoding comes after matching
    { template: "/v1/{name}", path: "/v1/a%20b", want: { name: "a b" } },
    { template: "/v1/{name}", path: "/v1/a%2Fb", want: { name: "a/b" } },
    { template: "/v1/{name=**}", path: "/v1/a%20b/c%2Fd/%C3%A9", want: { name: "a b/c/d/é" } },
    { template: "/v1/{name=**}", path: "/v1/org%2Fchild", want: { name: "org/child" } },
    { template: "/v1/{name}/x", path: "/v1/org%2Fchild/x", want: { name: "org/child" } },
    { template: "/v1/{name}", path: "/v1/org%2Fchild/x", want: undefined },
    { template: "/v1/{name=**}:go", path: "/v1/x%3Ago:go", want: { name: "x:go" } },
    { template: "/v1/{name}", path: "/v1/a%252F", want: { name: "a%2F" } },
  ];
  for (const c of cases) {
    it(`${c.template} ~ ${c.path}`, () => assert.deepEqual(match(c.template, c.path), c.want));
  }

  for (const raw of ["bad%zz", "cut%4", "end%", "%C3", "%E9t%C3%A9"]) {
    it(`a malformed escape matches, and its decoding throws: ${raw}`, () => {
      const bindings = matchPathTemplate(parsePathTemplate("/v1/{name=**}"), splitPath(`/v1/${raw}`)!);
      assert.equal(bindings?.get("name"), raw);
      assert.throws(() => decodeCapture(raw), MalformedEscapeError);
    });
  }

  it("parses verb, variables and ** position", () => {
    const t = parsePathTemplate("/v1/{name=shelves/*/books/**}:move");
    assert.equal(t.verb, "move");
    assert.equal(t.verbSuffix, ":move");
    assert.deepEqual(t.variables, [{ fieldPath: ["name"], key: "name", start: 1, end: 5, multiSegment: true }]);
    assert.equal(t.doubleStarIndex, 4);
    assert.equal(t.literalCount, 3);
  });

  for (const bad of ["iam/v2", "/v1/{a", "/v1/{a}/{a}", "/v1/**/x/**", "/v1/{a.}", "/v1//x", "/v1/{a={b}}", "/v1/x:verb/y"]) {
    it(`rejects ${bad}`, () => assert.throws(() => parsePathTemplate(bad), PathTemplateSyntaxError));
  }
});

describe("route table", () => {
  const table = new RouteTable(routesFromServices([GroupsService, PingService]));
  const lookup = (method: string, path: string) => {
    const r = table.lookup(method, path);
    if (r.kind !== "matched") return r;
    return { kind: r.kind, rpc: r.route.method.name, bindings: Object.fromEntries(r.bindings) };
  };

  const cases: { method: string; path: string; want: unknown }[] = [
    { method: "GET", path: "/iam/v2/groups", want: { kind: "matched", rpc: "ListGroups", bindings: {} } },
    { method: "GET", path: "/iam/v2/groups/abc/def", want: { kind: "matched", rpc: "GetGroup", bindings: { uid: "abc/def" } } },
    { method: "POST", path: "/iam/v2/groups", want: { kind: "matched", rpc: "CreateGroup", bindings: {} } },
    { method: "POST", path: "/iam/v2/groups/p1/p2", want: { kind: "matched", rpc: "CreateGroup", bindings: { parent: "p1/p2" } } },
    { method: "PATCH", path: "/iam/v2/groups/g1", want: { kind: "matched", rpc: "UpdateGroup", bindings: { "group.uid": "g1" } } },
    { method: "DELETE", path: "/iam/v2/groups/g1", want: { kind: "matched", rpc: "DeleteGroup", bindings: { uid: "g1" } } },
    { method: "GET", path: "/iam/v2beta1/groups/abc", want: { kind: "matched", rpc: "GetGroup", bindings: { uid: "abc" } } },
    { method: "GET", path: "/ping/v2beta1/ping", want: { kind: "matched", rpc: "Ping", bindings: {} } },
    { method: "GET", path: "/iam/v3/groups", want: { kind: "noMatch" } },
    { method: "GET", path: "/nothing/here", want: { kind: "noMatch" } },
    { method: "GET", path: "/", want: { kind: "noMatch" } },
    { method: "PUT", path: "/iam/v2/groups/g1", want: { kind: "methodNotAllowed", allowed: ["DELETE", "GET", "PATCH", "POST"] } },
    { method: "DELETE", path: "/iam/v2/groups", want: { kind: "methodNotAllowed", allowed: ["GET", "POST"] } },
  ];
  for (const c of cases) {
    it(`${c.method} ${c.path}`, () => assert.deepEqual(lookup(c.method, c.path), c.want));
  }

  it("prefers literals, then a verb, then fewer **", () => {
    const route = (source: string, order: number) =>
      ({ httpMethod: "GET", template: parsePathTemplate(source), order, method: { name: source } }) as unknown as RestRoute;
    const t = new RouteTable([
      route("/v1/{name=**}", 0),
      route("/v1/{name}", 1),
      route("/v1/special", 2),
      route("/v1/{name=**}:go", 3),
      route("/v1/{a}/{b}", 4),
      route("/v1/{a}/fixed", 5),
    ]);
    const winner = (path: string) => {
      const r = t.lookup("GET", path);
      return r.kind === "matched" ? r.route.template.source : r.kind;
    };
    assert.equal(winner("/v1/special"), "/v1/special");
    assert.equal(winner("/v1/other"), "/v1/{name}");
    assert.equal(winner("/v1/x/y/z"), "/v1/{name=**}");
    assert.equal(winner("/v1/x:go"), "/v1/{name=**}:go");
    assert.equal(winner("/v1/x/fixed"), "/v1/{a}/fixed");
    assert.equal(winner("/v1/x/y"), "/v1/{a}/{b}");
  });
});
