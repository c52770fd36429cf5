import type { RestRoute } from "./http-rules.js";
import { compareSpecificity, matchPathTemplate, splitPath } from "./path-template.js";
import type { PathBindings } from "./path-template.js";

export type RouteLookup =
  | { kind: "matched"; route: RestRoute; bindings: PathBindings }
  /** The path matches some template, but none for this HTTP method. */
  | { kind: "methodNotAllowed"; allowed: string[] }
  | { kind: "noMatch" };

/** The version segment that is served as an alias of `v2`. */
const V2_ALIASES = new Set(["v2beta1"]);

/**
 * Finds the route of a request.
 *
 * Contracts:
 * - `/<domain>/v2beta1/...` is looked up as `/<domain>/v2/...`.
 * - Among routes matching method and path, the most specific template wins
 *   (compareSpecificity), then the earlier declared route.
 * - Routes are indexed by their first literal segment, so a lookup only tries the routes
 *   that can match.
 */
export class RouteTable {
  private readonly byFirstSegment = new Map<string, RestRoute[]>();
  private readonly variableFirst: RestRoute[] = [];

  constructor(routes: readonly RestRoute[]) {
    for (const route of routes) {
      const first = route.template.segments[0];
      if (first.kind === "literal") {
        const list = this.byFirstSegment.get(first.value) ?? [];
        list.push(route);
        this.byFirstSegment.set(first.value, list);
      } else {
        this.variableFirst.push(route);
      }
    }
  }

  /** `path` is the URL path without the query string, still percent-encoded. */
  lookup(httpMethod: string, path: string): RouteLookup {
    const segments = splitPath(path);
    if (segments === undefined) return { kind: "noMatch" };
    if (segments.length > 1 && V2_ALIASES.has(segments[1])) segments[1] = "v2";

    const colon = segments[0].indexOf(":");
    const candidates = this.byFirstSegment.get(colon < 0 ? segments[0] : segments[0].slice(0, colon));
    let best: { route: RestRoute; bindings: PathBindings } | undefined;
    let allowed: Set<string> | undefined;
    for (const list of candidates === undefined ? [this.variableFirst] : [candidates, this.variableFirst]) {
      for (const route of list) {
        const bindings = matchPathTemplate(route.template, segments);
        if (bindings === undefined) continue;
        if (route.httpMethod !== "*" && route.httpMethod !== httpMethod) {
          (allowed ??= new Set()).add(route.httpMethod);
          continue;
        }
        if (best === undefined || isBetter(route, best.route)) best = { route, bindings };
      }
    }
    if (best) return { kind: "matched", ...best };
    if (allowed !== undefined) return { kind: "methodNotAllowed", allowed: [...allowed].sort() };
    return { kind: "noMatch" };
  }
}

function isBetter(a: RestRoute, b: RestRoute): boolean {
  const c = compareSpecificity(a.template, b.template);
  return c < 0 || (c === 0 && a.order < b.order);
}
