import assert from "node:assert/strict";
import { test } from "node:test";
import { BuiltInRole, Cap, CapSchema } from "../../gen/platform/common/v1/authorization_pb.js";
import { getOption, hasOption } from "@bufbuild/protobuf";
import { string_name } from "../../gen/platform/common/v1/authorization_pb.js";
import {
  ALL_CAPABILITIES,
  BUILT_IN_ROLES,
  builtInRole,
  capabilityName,
  capabilityOfString,
  capabilityString,
  CURRENT_CAPABILITIES,
  placementOf,
} from "../../src/access/capabilities.js";

/** The hosted service's name and number of each capability we share with it (its public `Capability` enum). */
const HOSTED: Record<string, number> = {
  CAP_IAM_GROUPS_CREATE: 101, CAP_IAM_GROUPS_UPDATE: 102, CAP_IAM_GROUPS_LIST: 103, CAP_IAM_GROUPS_DELETE: 104,
  CAP_IAM_GROUP_INVITES_CREATE: 201, CAP_IAM_GROUP_INVITES_LIST: 203, CAP_IAM_GROUP_INVITES_DELETE: 204,
  CAP_IAM_ROLES_CREATE: 301, CAP_IAM_ROLES_UPDATE: 302, CAP_IAM_ROLES_LIST: 303, CAP_IAM_ROLES_DELETE: 304,
  CAP_IAM_ROLE_BINDINGS_CREATE: 401, CAP_IAM_ROLE_BINDINGS_UPDATE: 402, CAP_IAM_ROLE_BINDINGS_LIST: 403, CAP_IAM_ROLE_BINDINGS_DELETE: 404,
  CAP_IAM_ACCOUNT_ASSOCIATIONS_CREATE: 701, CAP_IAM_ACCOUNT_ASSOCIATIONS_UPDATE: 702, CAP_IAM_ACCOUNT_ASSOCIATIONS_LIST: 703, CAP_IAM_ACCOUNT_ASSOCIATIONS_DELETE: 704,
  CAP_IAM_IDENTITY_CREATE: 901, CAP_IAM_IDENTITY_UPDATE: 902, CAP_IAM_IDENTITY_LIST: 903, CAP_IAM_IDENTITY_DELETE: 904,
  CAP_IAM_IDENTITY_PROVIDERS_CREATE: 1301, CAP_IAM_IDENTITY_PROVIDERS_UPDATE: 1302, CAP_IAM_IDENTITY_PROVIDERS_LIST: 1303, CAP_IAM_IDENTITY_PROVIDERS_DELETE: 1304,
  CAP_EVENTS_SUBSCRIPTION_CREATE: 1501, CAP_EVENTS_SUBSCRIPTION_LIST: 1503, CAP_EVENTS_SUBSCRIPTION_DELETE: 1504,
  CAP_REPO_CREATE: 1603, CAP_REPO_UPDATE: 1604, CAP_REPO_LIST: 1605, CAP_REPO_DELETE: 1606,
  CAP_TAG_CREATE: 1611, CAP_TAG_UPDATE: 1612, CAP_TAG_LIST: 1613, CAP_TAG_DELETE: 1614,
  CAP_LIBRARIES_ARTIFACTS_LIST: 1803,
  CAP_TERMS_ACCEPT: 2201, CAP_TERMS_LIST: 2202,
};
/** Ours alone, numbered from 100000 up where the hosted enum has nothing. */
const OWN = [
  "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_CREATE", "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_UPDATE",
  "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_LIST", "CAP_IAM_EXTERNAL_GROUP_ROLE_MAPPINGS_DELETE",
  "CAP_IAM_GROUP_INVITES_UPDATE",
  "CAP_REGISTRY_PULL", "CAP_REGISTRY_PUSH", "CAP_REGISTRY_PULL_TOKENS_CREATE",
  "CAP_REGISTRY_RETENTION_POLICIES_CREATE", "CAP_REGISTRY_RETENTION_POLICIES_UPDATE", "CAP_REGISTRY_RETENTION_POLICIES_LIST", "CAP_REGISTRY_RETENTION_POLICIES_DELETE",
  "CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK",
  "CAP_REGISTRY_UPSTREAMS_CREATE", "CAP_REGISTRY_UPSTREAMS_UPDATE", "CAP_REGISTRY_UPSTREAMS_LIST", "CAP_REGISTRY_UPSTREAMS_DELETE",
  "CAP_REGISTRY_TRUSTED_KEYS_CREATE", "CAP_REGISTRY_TRUSTED_KEYS_UPDATE", "CAP_REGISTRY_TRUSTED_KEYS_LIST", "CAP_REGISTRY_TRUSTED_KEYS_DELETE",
  "CAP_REGISTRY_TRUST_POLICIES_UPDATE", "CAP_REGISTRY_TRUST_POLICIES_LIST",
];
/** Names this server shipped before, kept as aliases: old name to current name. */
const ALIASES: Record<string, string> = {
  CAP_IAM_IDENTITIES_LIST: "CAP_IAM_IDENTITY_LIST", CAP_IAM_IDENTITIES_CREATE: "CAP_IAM_IDENTITY_CREATE",
  CAP_IAM_IDENTITIES_UPDATE: "CAP_IAM_IDENTITY_UPDATE", CAP_IAM_IDENTITIES_DELETE: "CAP_IAM_IDENTITY_DELETE",
  CAP_IAM_TERMS_LIST: "CAP_TERMS_LIST", CAP_IAM_TERMS_ACCEPT: "CAP_TERMS_ACCEPT",
  CAP_EVENTS_SUBSCRIPTIONS_LIST: "CAP_EVENTS_SUBSCRIPTION_LIST", CAP_EVENTS_SUBSCRIPTIONS_CREATE: "CAP_EVENTS_SUBSCRIPTION_CREATE",
  CAP_EVENTS_SUBSCRIPTIONS_DELETE: "CAP_EVENTS_SUBSCRIPTION_DELETE",
};

const number = (name: string) => CapSchema.values.find((v) => v.name === name)?.number;

test("capabilities shared with the hosted service have its names and numbers; ours lie above its ranges", () => {
  for (const [name, n] of Object.entries(HOSTED)) assert.equal(number(name), n, name);
  for (const name of OWN) assert.ok((number(name) ?? 0) >= 100000, name);
  assert.deepEqual([...ALL_CAPABILITIES].sort(), [...Object.keys(HOSTED), ...OWN].sort(), "every capability is in one of the two lists");
});

test("older names are aliases of the current ones, never the name a number maps to", () => {
  for (const [old, current] of Object.entries(ALIASES)) {
    const value = CapSchema.values.find((v) => v.name === old);
    assert.equal(value?.number, number(current), old);
    assert.ok(value?.deprecated, `${old} is deprecated`);
    assert.equal(capabilityName(value!.number as Cap), current);
    assert.ok(!ALL_CAPABILITIES.includes(old));
  }
  assert.equal(CapSchema.values.length, 1 + ALL_CAPABILITIES.length + Object.keys(ALIASES).length);
});

test("every capability is placed among the built-in roles deliberately", () => {
  const unplaced = CURRENT_CAPABILITIES.filter((v) => placementOf(v) === undefined).map((v) => v.name);
  assert.deepEqual(unplaced, [], "each capability declares (platform.common.v1.built_in_roles)");
  for (const value of CURRENT_CAPABILITIES) {
    const roles = placementOf(value)!;
    assert.ok(roles.includes(BuiltInRole.OWNER), `owner holds everything, ${value.name} too`);
    assert.ok(!roles.includes(BuiltInRole.UNSPECIFIED), value.name);
    assert.equal(new Set(roles).size, roles.length, `${value.name} names a role once`);
  }
  const aliasesPlaced = CapSchema.values.filter((v) => !CURRENT_CAPABILITIES.includes(v) && placementOf(v) !== undefined);
  assert.deepEqual(aliasesPlaced, [], "an alias is the same capability and says nothing of its own");
});

/** The hosted service's string form of each capability we share with it (its `(name)` option; capabilities.md). */
const HOSTED_STRINGS: Record<string, string> = {
  CAP_IAM_GROUPS_CREATE: "groups.create", CAP_IAM_GROUPS_UPDATE: "groups.update", CAP_IAM_GROUPS_LIST: "groups.list", CAP_IAM_GROUPS_DELETE: "groups.delete",
  CAP_IAM_GROUP_INVITES_CREATE: "group_invites.create", CAP_IAM_GROUP_INVITES_LIST: "group_invites.list", CAP_IAM_GROUP_INVITES_DELETE: "group_invites.delete",
  CAP_IAM_ROLES_CREATE: "roles.create", CAP_IAM_ROLES_UPDATE: "roles.update", CAP_IAM_ROLES_LIST: "roles.list", CAP_IAM_ROLES_DELETE: "roles.delete",
  CAP_IAM_ROLE_BINDINGS_CREATE: "role_bindings.create", CAP_IAM_ROLE_BINDINGS_UPDATE: "role_bindings.update",
  CAP_IAM_ROLE_BINDINGS_LIST: "role_bindings.list", CAP_IAM_ROLE_BINDINGS_DELETE: "role_bindings.delete",
  CAP_IAM_ACCOUNT_ASSOCIATIONS_CREATE: "account_associations.create", CAP_IAM_ACCOUNT_ASSOCIATIONS_UPDATE: "account_associations.update",
  CAP_IAM_ACCOUNT_ASSOCIATIONS_LIST: "account_associations.list", CAP_IAM_ACCOUNT_ASSOCIATIONS_DELETE: "account_associations.delete",
  CAP_IAM_IDENTITY_CREATE: "identity.create", CAP_IAM_IDENTITY_UPDATE: "identity.update", CAP_IAM_IDENTITY_LIST: "identity.list", CAP_IAM_IDENTITY_DELETE: "identity.delete",
  CAP_IAM_IDENTITY_PROVIDERS_CREATE: "identity_providers.create", CAP_IAM_IDENTITY_PROVIDERS_UPDATE: "identity_providers.update",
  CAP_IAM_IDENTITY_PROVIDERS_LIST: "identity_providers.list", CAP_IAM_IDENTITY_PROVIDERS_DELETE: "identity_providers.delete",
  CAP_EVENTS_SUBSCRIPTION_CREATE: "subscriptions.create", CAP_EVENTS_SUBSCRIPTION_LIST: "subscriptions.list", CAP_EVENTS_SUBSCRIPTION_DELETE: "subscriptions.delete",
  CAP_REPO_CREATE: "repo.create", CAP_REPO_UPDATE: "repo.update", CAP_REPO_LIST: "repo.list", CAP_REPO_DELETE: "repo.delete",
  CAP_TAG_CREATE: "tag.create", CAP_TAG_UPDATE: "tag.update", CAP_TAG_LIST: "tag.list", CAP_TAG_DELETE: "tag.delete",
  CAP_LIBRARIES_ARTIFACTS_LIST: "libraries.artifacts.list",
  CAP_TERMS_ACCEPT: "terms.accept", CAP_TERMS_LIST: "terms.list",
};

test("every capability has one string form (v1's), the hosted one where the hosted service has the capability", () => {
  assert.deepEqual(Object.keys(HOSTED_STRINGS).sort(), Object.keys(HOSTED).sort());
  const forms = CURRENT_CAPABILITIES.map((v) => getOption(v, string_name));
  assert.ok(forms.every((f) => /^[a-z_]+(\.[a-z_]+)+$/.test(f)), `dotted lowercase: ${forms.join(", ")}`);
  assert.equal(new Set(forms).size, forms.length, "unique");
  for (const [name, form] of Object.entries(HOSTED_STRINGS)) assert.equal(capabilityString(number(name) as Cap), form, name);
  const aliasesNamed = CapSchema.values.filter((v) => !CURRENT_CAPABILITIES.includes(v) && hasOption(v, string_name));
  assert.deepEqual(aliasesNamed, [], "an alias has no string form of its own");
});

test("a capability string is read in its string form or by an enum name, an older alias too", () => {
  assert.equal(capabilityOfString("repo.list"), Cap.REPO_LIST);
  assert.equal(capabilityOfString("CAP_REPO_LIST"), Cap.REPO_LIST);
  assert.equal(capabilityOfString("CAP_IAM_IDENTITIES_LIST"), Cap.IAM_IDENTITY_LIST);
  assert.equal(capabilityOfString("group_invites.update"), Cap.IAM_GROUP_INVITES_UPDATE);
  for (const unknown of ["", "CAP_UNSPECIFIED", "repo.fly", "REPO.LIST", "cap_repo_list", "apk.list"]) assert.equal(capabilityOfString(unknown), undefined, unknown);
});

test("the built-in roles are what api-surface 4 describes", () => {
  const caps = (name: Parameters<typeof builtInRole>[0]) => new Set(builtInRole(name).capabilities);
  assert.deepEqual(BUILT_IN_ROLES.map((r) => r.name), ["viewer", "editor", "owner", "registry.pull", "registry.pull_token_creator"]);
  assert.deepEqual([...caps("owner")].sort(), [...ALL_CAPABILITIES].sort(), "owner: everything");
  assert.deepEqual([...caps("viewer")].sort(), ALL_CAPABILITIES.filter((c) => c.endsWith("_LIST")).sort(), "viewer: every list, nothing else");
  assert.ok(!caps("viewer").has("CAP_REGISTRY_PULL"), "viewer does not pull");
  assert.deepEqual([...caps("registry.pull")].sort(), ["CAP_REGISTRY_PULL", "CAP_REPO_LIST", "CAP_TAG_LIST"]);
  const editorExtra = [...caps("editor")].filter((c) => !caps("viewer").has(c)).sort();
  assert.deepEqual(editorExtra, [
    "CAP_EVENTS_SUBSCRIPTION_CREATE", "CAP_EVENTS_SUBSCRIPTION_DELETE", "CAP_REGISTRY_PULL", "CAP_REGISTRY_PULL_TOKENS_CREATE", "CAP_REGISTRY_PUSH",
    "CAP_REGISTRY_RETENTION_POLICIES_CREATE", "CAP_REGISTRY_RETENTION_POLICIES_DELETE", "CAP_REGISTRY_RETENTION_POLICIES_UPDATE",
    "CAP_REGISTRY_UPSTREAMS_CREATE", "CAP_REGISTRY_UPSTREAMS_DELETE", "CAP_REGISTRY_UPSTREAMS_UPDATE",
    "CAP_REPO_CREATE", "CAP_REPO_DELETE", "CAP_REPO_UPDATE", "CAP_TAG_CREATE", "CAP_TAG_DELETE", "CAP_TAG_UPDATE",
  ]);
  for (const c of caps("viewer")) assert.ok(caps("editor").has(c), `editor is viewer plus: ${c}`);
  assert.ok(caps("owner").has("CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK") && !caps("editor").has("CAP_REGISTRY_IMMUTABLE_TAGS_UNLOCK"), "lifting immutable tags: owner, not editor");
  for (const c of ["CAP_REGISTRY_TRUSTED_KEYS_CREATE", "CAP_REGISTRY_TRUSTED_KEYS_UPDATE", "CAP_REGISTRY_TRUSTED_KEYS_DELETE", "CAP_REGISTRY_TRUST_POLICIES_UPDATE"]) {
    assert.ok(caps("owner").has(c) && !caps("editor").has(c), `changing what is trusted: owner, not editor (${c})`);
  }
  // As the hosted service's: it makes pull tokens, and can neither list identities nor pull itself.
  assert.deepEqual([...caps("registry.pull_token_creator")].sort(), ["CAP_IAM_GROUPS_LIST", "CAP_REGISTRY_PULL_TOKENS_CREATE"]);
});
