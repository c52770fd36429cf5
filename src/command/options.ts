import { parseArgs, type ParseArgsConfig } from "node:util";

/** Options many commands share, with their environment variables. */
export const storeOptions = {
  db: { type: "string", env: "DATABASE_URL", default: "./data/platform.db", help: "SQLite file, :memory:, or a postgres:// URL" },
  "api-url": { type: "string", env: "API_URL", help: "public URL of the API host (token issuer); default http://localhost:<port>" },
} as const;

/** A mistake in the command line: reported in one line, with a pointer to the command's help, exit status 2. */
export class UsageError extends Error {}

/** A failure the user can act on (a port in use, an unreadable file): reported in one line, exit status 2. */
export class CommandError extends Error {}

/** Parsed options by name: a string, a boolean flag, or undefined when neither given nor defaulted (a repeatable option: see `listOption`). */
export type Options = Record<string, string | boolean | undefined>;

export interface OptionSpec {
  type: "string" | "boolean";
  /** A string option given any number of times, its values joined by spaces; its environment variable lists them separated by commas or spaces. Read it with `listOption`. */
  multiple?: boolean;
  env?: string;
  default?: string;
  help: string;
}

/**
 * Parses `args` against `spec`; flags win over environment variables (an empty one counts as
 * unset), which win over defaults. Positional arguments are refused unless `positionals` is given, which then
 * receives them.
 */
export function parse(args: string[], spec: Record<string, OptionSpec>, positionals?: string[]): Options {
  const config: ParseArgsConfig = {
    args,
    strict: true,
    allowPositionals: positionals !== undefined,
    options: Object.fromEntries([
      ...Object.entries(spec).map(([name, s]) => [name, { type: s.type, multiple: s.multiple === true }]),
      ["help", { type: "boolean", short: "h" }],
    ]),
  };
  const parsed = parseArgs(config);
  const { values } = parsed;
  positionals?.push(...parsed.positionals);
  const out: Options = { help: values.help as boolean | undefined };
  for (const [name, s] of Object.entries(spec)) {
    const env = s.env ? process.env[s.env] || undefined : undefined;
    if (s.multiple) out[name] = (values[name] as string[] | undefined)?.join(" ") ?? env ?? s.default;
    else out[name] = (values[name] as string | boolean | undefined) ?? env ?? s.default;
  }
  return out;
}

/** A command's help: `operands` (e.g. `<path>...`) follow `[options]` in the usage line. */
export function usage(command: string, summary: string, spec: Record<string, OptionSpec>, operands = ""): string {
  const lines = Object.entries(spec).map(([name, s]) => {
    const flag = `--${name}${s.type === "string" ? " <value>" : ""}${s.multiple ? "..." : ""}`;
    const extra = [s.env && `env ${s.env}`, s.default && `default ${s.default}`].filter(Boolean).join(", ");
    return `  ${flag.padEnd(28)} ${s.help}${extra ? ` (${extra})` : ""}`;
  });
  return `Usage: platform-api ${command} [options]${operands ? ` ${operands}` : ""}\n\n${summary}\n\nOptions:\n${lines.join("\n")}\n  ${"--help".padEnd(28)} show this help\n`;
}

/**
 * `90s`, `15m`, `1h` or `7d`, to seconds. The unit is required: a bare `24` could mean hours as
 * easily as seconds. Throws a plain Error naming the accepted forms.
 */
export function parseDuration(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration like 90s, 15m, 1h or 7d (the unit is required)`);
  return Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "s" | "m" | "h" | "d"];
}

/** The units of a size (`512KiB`, `4MiB`, `10GiB`; `k`, `kb` and `kib` alike are 1024), lower case. */
export const BYTE_UNITS: Readonly<Record<string, number>> = { "": 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** A size such as `0`, `512`, `64KiB` or `4MiB`, to bytes (a whole number). Throws a plain Error naming the accepted forms. */
export function parseByteSize(text: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const scale = match ? BYTE_UNITS[match[2].toLowerCase()] : undefined;
  const value = match && scale ? Number(match[1]) * scale : NaN;
  if (!Number.isSafeInteger(value)) throw new Error(`"${text}" is not a size: bytes, or 512KiB, 4MiB, 10GiB`);
  return value;
}

/** A boolean option: the flag, or its environment variable as true/1 or false/0 (or empty). */
export function flag(name: string, options: Options): boolean {
  const value = options[name];
  if (typeof value === "boolean" || value === undefined) return value === true;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0|)$/i.test(value)) return false;
  throw new UsageError(`--${name}: "${value}" is not true or false`);
}

/** The values of a repeatable option (`multiple`): each flag's, or its environment variable's separated by commas or spaces; [] when none. */
export function listOption(name: string, options: Options): string[] {
  const value = options[name];
  return typeof value === "string" ? value.split(/[\s,]+/).filter((v) => v !== "") : [];
}
