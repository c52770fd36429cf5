import type { RestRoute } from "./http-rules.js";
import type { PathTemplate } from "./path-template.js";

/**
 * OpenAPI path parameter names: OpenAPI 3 forbids two paths that differ only in their
 * variables' names (`/groups/{uid}` and `/groups/{parent}`), so every route of one path
 * shape names the variable at one position the same (decisions.md).
 *
 * The name at a position: the variable's own name where every route of the shape agrees;
 * else the last field name of each (`group.uid` -> `uid`) when those agree; else the one
 * of them that identifies a resource (`uid`, v1 `id`), the name its Get and Delete use.
 * Throws when none of these gives one name (a new shape needs a rule here).
 */
export function openApiPathNames(routes: readonly RestRoute[]): Map<RestRoute, string[]> {
  const byShape = new Map<string, RestRoute[]>();
  for (const route of routes) {
    const shape = pathShape(route.template);
    (byShape.get(shape) ?? byShape.set(shape, []).get(shape)!).push(route);
  }
  const names = new Map<RestRoute, string[]>();
  for (const [shape, same] of byShape) {
    const count = same[0].template.variables.length;
    const shared = Array.from({ length: count }, (_, i) => sharedName(shape, same.map((r) => r.template.variables[i].fieldPath.join("."))));
    for (const route of same) names.set(route, shared);
  }
  return names;
}

/** The path as OpenAPI writes it: each `{field=pattern}` as `{name}`, `names` in template order. */
export function openApiPath(template: PathTemplate, names: readonly string[]): string {
  let i = 0;
  return template.source.replace(/\{[^}]+\}/g, () => `{${names[i++]}}`);
}

/** The path with every variable as `{}`: two templates of one shape are one OpenAPI path. */
export function pathShape(template: PathTemplate): string {
  return template.source.replace(/\{[^}]+\}/g, "{}");
}

function sharedName(shape: string, names: string[]): string {
  const distinct = [...new Set(names)];
  if (distinct.length === 1) return distinct[0];
  const last = [...new Set(distinct.map((n) => n.slice(n.lastIndexOf(".") + 1)))];
  if (last.length === 1) return last[0];
  const identifiers = last.filter((n) => n === "uid" || n === "id");
  if (identifiers.length === 1) return identifiers[0];
  throw new Error(`OpenAPI path ${shape}: no one name for the variables ${distinct.join(", ")}`);
}
