import type { NodeResponse } from "../../http/node-types.js";
import { FORM_TOKEN_FIELD } from "./device-form.js";

/** The few pages a person sees while signing in: plain HTML, no script, never framed or cached. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

/** The page's CSP: its forms post to this server, and a redirect they lead to goes only to `formTargets` besides. */
function contentSecurityPolicy(formTargets: string[]): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action ${["'self'", ...formTargets].join(" ")}; frame-ancestors 'none'`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The device page's forms: the lookup of a code the person types (GET, to the confirmation of
 * that code), or the confirmation of one code (POST with the page's form token, answered with a
 * redirect to the code's provider at `providerOrigin`, which the page's CSP lets the form follow).
 */
export type DeviceForm =
  | { kind: "lookup"; action: string }
  | { kind: "confirm"; action: string; userCode: string; formToken: string; providerOrigin: string };

function formHtml(form: DeviceForm): string {
  if (form.kind === "lookup") {
    return `<form method="get" action="${escape(form.action)}"><label>Code <input name="user_code" autocomplete="off" required></label> <button type="submit">Continue</button></form>`;
  }
  return `<form method="post" action="${escape(form.action)}"><input type="hidden" name="${FORM_TOKEN_FIELD}" value="${escape(form.formToken)}"><label>Code <input name="user_code" value="${escape(form.userCode)}" readonly></label> <button type="submit">Continue</button></form>`;
}

/** A page with a message and, with `form`, one of the device page's forms; `headers` are added to the page's own. */
export function page(res: NodeResponse, status: number, title: string, message: string, form?: DeviceForm, headers: Record<string, string> = {}): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head><body><h1>${escape(title)}</h1><p>${escape(message.trim())}</p>${form ? formHtml(form) : ""}</body></html>`;
  const formTargets = form?.kind === "confirm" ? [form.providerOrigin] : [];
  res.writeHead(status, { ...headers, ...PAGE_HEADERS, "content-security-policy": contentSecurityPolicy(formTargets), "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}

/** 302 to `location`, uncached. */
export function redirect(res: NodeResponse, location: string): void {
  res.writeHead(302, { location, "cache-control": "no-store", "content-length": "0", "referrer-policy": "no-referrer" });
  res.end();
}
