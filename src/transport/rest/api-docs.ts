import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { packageRoot } from "../http/package-root.js";
import { buildOpenApi, type OpenApiOptions } from "./openapi.js";

/** The document's title, version and description (the generator script and the server share them). */
export const OPENAPI_INFO: Omit<OpenApiOptions, "describe"> = {
  title: "Platform API",
  version: "v2",
  description:
    "The REST/JSON face of the Platform API: each operation is a gRPC method served through its `google.api.http` rule " +
    "(the same method answers gRPC, gRPC-Web and Connect at the path its description names). `/<domain>/v2beta1/...` is an alias of `/<domain>/v2/...`. " +
    "Field names are lowerCamel; query parameters also accept the proto names (`page_size`). Each operation accepts exactly the query " +
    "parameters it lists: any other, and any body key that names no field, is 400 INVALID_ARGUMENT with a BadRequest naming each " +
    "(`Unknown name`). Errors are `google.rpc.Status` bodies.",
};

/** Where `npm run generate` writes the document, from the package root. */
export const OPENAPI_FILE = "gen/openapi.json";


/** swagger-ui-dist's files served under /docs/, and their types. */
const UI_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Platform API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, presets: [SwaggerUIBundle.presets.apis] });\n`;

/** The page loads only this server's files; Swagger UI sets inline styles and shows data: images. */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; frame-ancestors 'none'";

/**
 * `GET /openapi.json`: the committed document (`gen/openapi.json`, with the protos' comments),
 * or, when that file is missing, one generated from the served descriptors (without comments).
 * `GET /docs`: Swagger UI (the `swagger-ui-dist` package, served from node_modules) rendering it.
 * Public: documentation needs no credential. Resolves false for any other path.
 */
export function createApiDocsRoutes(services: readonly DescService[]) {
  const root = packageRoot();
  const uiDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  let document: Buffer | undefined;
  const documentBytes = (): Buffer => {
    if (document) return document;
    const file = join(root, OPENAPI_FILE);
    document = existsSync(file) ? readFileSync(file) : Buffer.from(JSON.stringify(buildOpenApi(services, OPENAPI_INFO)));
    return document;
  };
  const files = new Map<string, Promise<Buffer>>();

  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const path = (req.url ?? "").split("?")[0];
    let body: Buffer;
    let type: string;
    if (path === "/openapi.json") {
      body = documentBytes();
      type = "application/json";
    } else if (path === "/docs" || path === "/docs/") {
      body = Buffer.from(PAGE);
      type = "text/html; charset=utf-8";
    } else if (path === "/docs/init.js") {
      body = Buffer.from(INIT);
      type = "text/javascript; charset=utf-8";
    } else if (path.startsWith("/docs/") && Object.hasOwn(UI_FILES, path.slice(6))) {
      const name = path.slice(6);
      let read = files.get(name);
      if (!read) files.set(name, (read = readFile(join(uiDir, name))));
      body = await read;
      type = UI_FILES[name];
    } else {
      return false;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-length": "0" });
      res.end();
      return true;
    }
    res.writeHead(200, {
      "content-type": type,
      "content-length": String(body.byteLength),
      "cache-control": "public, max-age=300",
      "x-content-type-options": "nosniff",
      ...(type.startsWith("text/html") ? { "content-security-policy": CSP } : {}),
    });
    if (req.method === "HEAD") res.end();
    else res.end(body);
    return true;
  };
}
