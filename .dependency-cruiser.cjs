/**
 * The layering of src/ (docs/architecture.md), checked by `npm run check` (`npm run deps`):
 *
 *   cli, server (composition root)        may import anything
 *   transport (listener, http, rpc, rest, oci, auth), interceptors, system, telemetry
 *                                         reach a domain only through its face (index.ts)
 *   domains/<d>                           reach another domain only through its face; no transport
 *   domains/kit (domain, schema, tables, standard methods, jobs)
 *                                         below the domains: imports none of them (but the tables' types)
 *   access (tokens, principal, capabilities, rules)
 *                                         imports no domain, no transport
 *   aip (AIP helpers), store, engines,
 *   command (the command-line kit)       import nothing above them
 *   cli/client (login, whoami, ...)      a client of the API: node, openid-client/jose and the command kit only
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "Modules form no import cycle.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "domain-through-its-face",
      severity: "error",
      comment: "Outside the domains, a domain is reached only through its face (src/domains/<d>/index.ts).",
      from: { path: "^src/", pathNot: ["^src/domains/", "^src/server/(domains|commands|migrations)\\.ts$"] },
      to: { path: "^src/domains/[^/]+/", pathNot: ["^src/domains/[^/]+/index\\.ts$", "^src/domains/kit/"] },
    },
    {
      name: "only-the-domain-list-loads-modules",
      severity: "error",
      comment: "The domain list (src/server/domains.ts) and the command list load a domain's module or commands; nothing else reaches past a face.",
      from: { path: "^src/server/(domains|commands|migrations)\\.ts$" },
      to: { path: "^src/domains/[^/]+/", pathNot: ["^src/domains/[^/]+/(index|module|commands|migrations)\\.ts$", "^src/domains/kit/"] },
    },
    {
      name: "domain-to-domain-through-its-face",
      severity: "error",
      comment: "A domain reaches another domain only through that one's face; the kit below them is reached directly.",
      from: { path: "^src/domains/([^/]+)/", pathNot: "^src/domains/kit/" },
      to: { path: "^src/domains/[^/]+/", pathNot: ["^src/domains/$1/", "^src/domains/[^/]+/index\\.ts$", "^src/domains/kit/"] },
    },
    {
      name: "kit-below-the-domains",
      severity: "error",
      comment: "The domain kit (src/domains/kit/) is what every domain builds on: it imports no domain (the shared schema joins their table types only).",
      from: { path: "^src/domains/kit/", pathNot: "^src/domains/kit/schema\\.ts$" },
      to: { path: "^src/domains/", pathNot: "^src/domains/kit/" },
    },
    {
      name: "access-imports-no-domain",
      severity: "error",
      comment: "Access (tokens, principal, capabilities, rules) is the kernel the domains and hosts share: it imports no domain, no transport, no host.",
      from: { path: "^src/access/" },
      to: { path: "^src/(domains|transport|server|cli|interceptors|system|telemetry)/" },
    },
    {
      name: "domains-no-transport",
      severity: "error",
      comment: "A domain is independent of the wires and hosts that serve it, the token and login routes (transport/auth) included.",
      from: { path: "^src/domains/" },
      to: { path: "^src/(transport|server|cli|interceptors|system|telemetry)/" },
    },
    {
      name: "store-imports-nothing-above",
      severity: "error",
      comment: "The store is generic: it knows no API, no domain, no transport, no configuration.",
      from: { path: "^src/store/" },
      to: { path: "^src/", pathNot: "^src/store/" },
    },
    {
      name: "aip-imports-no-store-driver",
      severity: "error",
      comment: "The AIP helpers use the store's errors and list types, never a driver.",
      from: { path: "^src/aip/" },
      to: { path: "^src/(store/(dialect|sqlite-driver|store|transaction|precompiled)|domains|transport|server|cli|access|interceptors)" },
    },
    {
      name: "command-kit-imports-only-the-store",
      severity: "error",
      comment: "The command-line kit (options, help, progress) serves the CLI and the domains' commands: it knows neither.",
      from: { path: "^src/command/" },
      to: { path: "^src/", pathNot: "^src/(command|store)/" },
    },
    {
      name: "cli-client-is-only-a-client",
      severity: "error",
      comment:
        "The client commands (src/cli/client/) talk to an API over HTTP: they import node's built-ins, openid-client or jose, " +
        "the command-line kit and each other, never the server's code, the generated code or another package.",
      from: { path: "^src/cli/client/" },
      to: {
        dependencyTypesNot: ["core"],
        pathNot: ["^src/cli/client/", "^src/command/", "^node_modules/(openid-client|jose|@types/node)/"],
      },
    },
    {
      name: "engines-import-nothing-of-the-server",
      severity: "error",
      comment: "Engines (OSV, inventory, package feeds) are libraries: other engines and packages only.",
      from: { path: "^src/engines/" },
      to: { path: "^(src|gen)/", pathNot: "^src/engines/" },
    },
  ],
  options: {
    // Generated code and packages are in the graph, so rules can name them, but not cruised through.
    doNotFollow: { path: "^(gen|node_modules)/" },
    exclude: { path: "^dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
