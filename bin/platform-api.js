#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so the published tree is the source tree.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
