import { randomBytes, timingSafeEqual } from "node:crypto";
import type { NodeRequest } from "../../http/node-types.js";

/** The device confirmation form's hidden field: the value the page's cookie holds. */
export const FORM_TOKEN_FIELD = "form_token";

/** 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether a device confirmation was posted from this server's own page (login CSRF: another
 * site's form posting a user code of its attacker's terminal would sign its visitor in there).
 * The page binds its form to the browser with a double-submit token: a random value set as a
 * cookie (HttpOnly, SameSite=Strict, `__Host-` and Secure on https) and written into the form's
 * hidden `form_token`. Another site can neither read the value nor make the browser send the
 * cookie with its post; a value it fetched for itself matches no cookie of its visitor.
 *
 * A confirmation is taken when no header names another origin (`Sec-Fetch-Site` other than
 * `same-origin`, or an `Origin` other than the server's and "null") and either `Origin` names the
 * server's origin or the posted token equals the cookie. `Origin: null` proves nothing: the page
 * sends `Referrer-Policy: no-referrer`, so browsers post it as "null" from the page itself.
 */
export function createDeviceForm(options: { apiUrl: string; lifetimeMs: number }) {
  const api = new URL(options.apiUrl);
  const secure = api.protocol === "https:";
  const cookieName = secure ? "__Host-platform-device-form" : "platform-device-form";
  const attributes = `Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(options.lifetimeMs / 1000)}${secure ? "; Secure" : ""}`;

  function cookieOf(req: NodeRequest): string | undefined {
    for (const pair of String(req.headers.cookie ?? "").split(";")) {
      const index = pair.indexOf("=");
      if (index > 0 && pair.slice(0, index).trim() === cookieName) {
        const value = pair.slice(index + 1).trim();
        if (TOKEN.test(value)) return value;
      }
    }
    return undefined;
  }

  return {
    /**
     * The token for a page's form and the `Set-Cookie` header binding it to the browser: the
     * browser's own value when it holds one (so pages open in several tabs all stay valid),
     * else a new one; the cookie's lifetime starts again.
     */
    issue(req: NodeRequest): { token: string; headers: Record<string, string> } {
      const token = cookieOf(req) ?? randomBytes(32).toString("base64url");
      return { token, headers: { "set-cookie": `${cookieName}=${token}; ${attributes}` } };
    },

    /** Whether the POST `req`, with the form's `postedToken`, came from this server's page. */
    fromOwnPage(req: NodeRequest, postedToken: string): boolean {
      const site = req.headers["sec-fetch-site"];
      if (site !== undefined && site !== "same-origin") return false;
      const origin = req.headers.origin;
      if (origin === api.origin) return true;
      if (origin !== undefined && origin !== "null") return false;
      const cookie = cookieOf(req);
      return cookie !== undefined && TOKEN.test(postedToken) && timingSafeEqual(Buffer.from(cookie), Buffer.from(postedToken));
    },
  };
}
