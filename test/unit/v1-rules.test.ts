import assert from "node:assert/strict";
import { test } from "node:test";
import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { event_type } from "../../gen/platform/common/v1/events_pb.js";
import { isV1 } from "../../src/aip/v1/version.js";
import { requirementOf } from "../../src/access/rules.js";
import { API_SERVICES } from "../../src/server/domains.js";

const methods = (v1: boolean) => API_SERVICES.filter((s) => isV1(s) === v1).flatMap((s) => s.methods);

/** A rule without the field it reads (v1 names it `id`, `parent_id`, v2 `uid`, `parent`). */
function ruleOf(method: DescMethod): unknown {
  const rule = requirementOf(method);
  return rule.kind === "scoped" ? { ...rule, field: undefined, path: undefined } : rule;
}

/** Changing v1 RPCs v2 has no twin for, each with the reason (their own rules are tested in their e2e tests). */
const WITHOUT_TWIN: Record<string, string> = {
  "platform.registry.v1.Registry/UpdateTag": "v2 has no tag Update (a tag moves by CreateTag); it declares the hosted platform.registry.tag.updated",
  "platform.auth.v1.Auth/Register": "auth has only v1, as hosted (auth.registered); test/e2e/login.test.ts",
};

test("every changing v1 RPC declares the event type and the authorization of the v2 RPC it maps onto", () => {
  const v2ByEvent = new Map(methods(false).map((m) => [getOption(m, event_type), m]));
  const changing = methods(true).filter((m) => m.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS);
  assert.ok(changing.length > 0);
  for (const v1 of changing.filter((m) => !(`${m.parent.typeName}/${m.name}` in WITHOUT_TWIN))) {
    const v2 = v2ByEvent.get(getOption(v1, event_type));
    assert.ok(v2, `${v1.parent.typeName}/${v1.name} declares the event type of a v2 RPC`);
    assert.deepEqual(ruleOf(v1), ruleOf(v2), `${v1.parent.typeName}/${v1.name} is authorized as ${v2.parent.typeName}/${v2.name}`);
  }
});

test("every v1 List is authorized as a v2 List of its domain (unscoped on the same capabilities)", () => {
  const v2Lists = methods(false).filter((m) => m.name.startsWith("List")).map((m) => JSON.stringify(ruleOf(m)));
  for (const v1 of methods(true).filter((m) => m.name.startsWith("List") && requirementOf(m).kind === "unscoped")) {
    assert.ok(v2Lists.includes(JSON.stringify(ruleOf(v1))), `${v1.parent.typeName}/${v1.name} has the rule of a v2 List`);
  }
});
