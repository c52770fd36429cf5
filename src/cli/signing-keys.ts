import { DEFAULT_KEY_ACTIVATION_DELAY_MS, KEY_RELOAD_INTERVAL_MS, KEY_RETIREMENT_DELAY_MS, keyStates, rotateSigningKeys } from "../access/signing-keys.js";
import { listSigningKeys } from "../store/server-keys.js";
import { openStore } from "../server/open-store.js";
import { parse, parseDuration, storeOptions, usage, type OptionSpec } from "../command/options.js";

const rotateOptions: Record<string, OptionSpec> = {
  "activate-in": { type: "string", default: `${DEFAULT_KEY_ACTIVATION_DELAY_MS / 60_000}m`, help: "when the new key starts signing, e.g. 10m, or 0s at once" },
  db: storeOptions.db,
};
const listOptions: Record<string, OptionSpec> = { db: storeOptions.db };

/**
 * `keys rotate` and `keys list`: the server's signing keys (src/access/signing-keys.ts). Prints JSON.
 * `usageError` makes the CLI's usage error (exit 2) from a message.
 */
export async function signingKeysCommand(args: string[], usageError: (message: string) => Error): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "list") {
    const o = parse(rest, listOptions);
    if (o.help) return void process.stdout.write(usage("keys list", "Print every signing key: kid, create_time, activate_time and state (signing, pending, verifying).", listOptions));
    const store = await openStore(o.db as string);
    try {
      const now = Date.now();
      const keys = keyStates(await listSigningKeys(store.db), now).map(({ row, state }) => ({
        kid: row.kid,
        create_time: new Date(Number(row.create_time)).toISOString(),
        activate_time: new Date(Number(row.activate_time)).toISOString(),
        state,
      }));
      process.stdout.write(`${JSON.stringify({ keys })}\n`);
    } finally {
      await store.close();
    }
    return;
  }
  if (sub !== "rotate") throw usageError(sub === undefined ? "keys needs a subcommand: rotate or list" : `unknown keys subcommand "${sub}"`);
  const o = parse(rest, rotateOptions);
  const summary =
    `Add a signing key. Every server publishes it within ${KEY_RELOAD_INTERVAL_MS / 1000} s and accepts tokens it signed at once; it signs from\n` +
    "--activate-in on (published first, so verifiers that cache the JWKS hold it). Keys a newer one replaced more than\n" +
    `${Math.round(KEY_RETIREMENT_DELAY_MS / 60_000)} minutes ago (no token they signed is still valid) are removed. Prints {kid, activate_time, removed}.`;
  if (o.help) return void process.stdout.write(usage("keys rotate", summary, rotateOptions));
  let delaySeconds: number;
  try {
    delaySeconds = parseDuration(o["activate-in"] as string);
  } catch (error) {
    throw usageError(`--activate-in: ${(error as Error).message}`);
  }
  const store = await openStore(o.db as string);
  try {
    const rotation = await rotateSigningKeys(store.db, Date.now(), delaySeconds * 1000);
    process.stdout.write(`${JSON.stringify({ kid: rotation.kid, activate_time: new Date(rotation.activateTime).toISOString(), removed: rotation.removed })}\n`);
  } finally {
    await store.close();
  }
}
