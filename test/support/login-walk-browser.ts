import { walkLoginOverHttp } from "./login-walk.js";

/**
 * A BROWSER for the CLI's `login` in tests: `node --import tsx login-walk-browser.ts <url>`, with
 * the person in LOGIN_WALK_USER. Walks the sign-in to its last page (the CLI's loopback callback)
 * and prints where it ended and that page's text; exits 1 when the walk fails.
 */
const [url] = process.argv.slice(2);
try {
  const end = await walkLoginOverHttp(url, process.env.LOGIN_WALK_USER ?? "ada");
  process.stdout.write(`${end.status ?? ""} ${end.url.href}\n${end.body ?? ""}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
}
