import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import type { NodeRequest, NodeResponse } from "../http/node-types.js";
import { packageRoot } from "../http/package-root.js";

/** Where `npm run build` puts the console (Vite, from console/), below the package root. */
export const CONSOLE_DIR = "dist/console";
export const CONSOLE_PATH = "/console";

/** The errors of reading a path that names no file. */
const NO_FILE = new Set(["ENOENT", "EISDIR", "ENOTDIR", "ENAMETOOLONG"]);

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/**
 * The console page's policy: its own scripts and styles only, calls to this host only, never framed.
 * The console reaches the API through the same RPCs as every client (Connect over fetch).
 */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The web console at /console: the files Vite built, `assets/` named by content hash and cached for
 * good, every other path under /console answered with `index.html` (the console routes in the
 * browser) and revalidated each time. Resolves false for any other path; 404 with a hint when the
 * console was not built.
 */
export function createConsoleRoutes() {
  const root = join(packageRoot(), CONSOLE_DIR);
  const cache = new Map<string, Promise<Buffer>>();
  /** A file's content, or undefined when the path names no file (missing, a folder, too long, a NUL byte); other errors reject. */
  const read = (file: string): Promise<Buffer | undefined> => {
    if (file.includes("\0")) return Promise.resolve(undefined);
    let found = cache.get(file);
    if (!found) {
      found = readFile(file);
      found.catch(() => cache.delete(file));
      cache.set(file, found);
    }
    return found.catch((error: NodeJS.ErrnoException) => {
      if (NO_FILE.has(error.code ?? "")) return undefined;
      throw error;
    });
  };

  return async (req: NodeRequest, res: NodeResponse): Promise<boolean> => {
    const raw = (req.url ?? "").split("?")[0];
    if (raw !== CONSOLE_PATH && !raw.startsWith(`${CONSOLE_PATH}/`)) return false;
    // Asset names are plain: a path that does not decode is simply the page.
    let path: string;
    try {
      path = decodeURIComponent(raw);
    } catch {
      path = `${CONSOLE_PATH}/`;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-length": "0" }).end();
      return true;
    }
    if (path === CONSOLE_PATH) {
      res.writeHead(301, { location: `${CONSOLE_PATH}/`, "content-length": "0" }).end();
      return true;
    }
    const relative = normalize(path.slice(CONSOLE_PATH.length + 1));
    const asset = relative.startsWith("assets/") && !relative.includes("..");
    const file = asset ? join(root, relative) : join(root, "index.html");
    const body = await read(file);
    if (body === undefined) {
      const hint = Buffer.from(asset ? "Not found" : "The console is not built: run `npm run build`.");
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "content-length": String(hint.byteLength) }).end(hint);
      return true;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": String(body.byteLength),
      "cache-control": asset ? "public, max-age=31536000, immutable" : "no-cache",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      ...(asset ? {} : { "content-security-policy": CSP }),
    });
    if (req.method === "HEAD") res.end();
    else res.end(body);
    return true;
  };
}
