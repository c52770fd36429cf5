/**
 * A person signing in over plain HTTP, as a browser would without script: manual redirects, one
 * cookie jar, and the forms on the way posted with their fields (the test IdP's `login` and
 * `password`, the API's device confirmation `user_code`). Imports nothing, so that a BROWSER
 * script run by the CLI (login-walk-browser.ts) can use it as well as the tests.
 */
export interface WalkOptions {
  /** The password posted with `login`; default `login` (the test IdP takes any). */
  password?: string;
  /**
   * Stop, without fetching it, at the first URL off this origin (the test IdP's
   * `loginOverHttp`: the relying party's redirect URI). Without it the walk goes to the end.
   */
  stopOffOrigin?: string;
}

export interface WalkResult {
  /** Where the walk ended. */
  url: URL;
  /** The status and text of the last page, when it was fetched (not with `stopOffOrigin`). */
  status?: number;
  body?: string;
}

const unescapeHtml = (text: string): string => text.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c))).replace(/&amp;/g, "&").replace(/&quot;/g, '"');
const pageText = (html: string): string => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim().slice(0, 300);

/** The first `<form method="post">` of `html`: its action and the name → value of its inputs. */
function postForm(html: string): { action: string; fields: Record<string, string> } | undefined {
  const form = /<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) return undefined;
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input\b([^>]*)>/g)) {
    const name = /\bname="([^"]*)"/.exec(input[1])?.[1];
    if (name !== undefined) fields[unescapeHtml(name)] = unescapeHtml(/\bvalue="([^"]*)"/.exec(input[1])?.[1] ?? "");
  }
  return { action: unescapeHtml(form[1]), fields };
}

/**
 * Follows `start` as the person `login`: redirects are followed by hand (cookies kept), a page
 * with a POST form gets it submitted (its inputs' values, with `login` and `password` filled in),
 * and the walk ends at the first page that is neither (returned with its status and text), or
 * with `stopOffOrigin` at the first URL off that origin. Throws when a form comes back after it
 * was posted (a refused login or code), or, with `stopOffOrigin`, on any other page on the origin.
 */
export async function walkLoginOverHttp(start: string | URL, login: string, options: WalkOptions = {}): Promise<WalkResult> {
  const password = options.password ?? login;
  const jar = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = attributes.some((a) => {
        const [key, v] = a.trim().split("=");
        return (key.toLowerCase() === "expires" && Date.parse(v) <= Date.now()) || (key.toLowerCase() === "max-age" && Number(v) <= 0);
      });
      if (expired || value === "") jar.delete(name);
      else jar.set(name, value);
    }
  };
  const send = async (url: URL, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    remember(response);
    return response;
  };

  const posted = new Set<string>();
  let url = new URL(start);
  let init: RequestInit = {};
  for (let hops = 0; hops < 30; hops++) {
    if (options.stopOffOrigin !== undefined && url.origin !== options.stopOffOrigin) return { url };
    const response = await send(url, init);
    init = {};
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    const form = postForm(html);
    if (response.status !== 200 || !form) {
      if (options.stopOffOrigin === undefined) return { url, status: response.status, body: html };
      throw new Error(`login walk: no way on from ${url.href} (${response.status}): ${pageText(html)}`);
    }
    const action = new URL(form.action, url);
    if (posted.has(action.href)) throw new Error(`login walk: login as ${login} refused at ${url.href} (${response.status}): ${pageText(html)}`);
    posted.add(action.href);
    const fields = { ...form.fields };
    if ("login" in fields) fields.login = login;
    if ("password" in fields) fields.password = password;
    url = action;
    init = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() };
  }
  throw new Error(`login walk: too many redirects from ${String(start)}`);
}
