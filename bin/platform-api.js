#!/usr/bin/env node
// Runs the compiled build in dist/, which `npm install` makes (the `prepare` script) and `npm run build` remakes.
import { existsSync } from "node:fs";

const entry = new URL("../dist/src/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("platform-api: no build in dist/: run `npm run build` (or `npm install`) first\n");
  process.exit(1);
}
await import(entry.href);
