import type { NodeResponse } from "../../http/node-types.js";

/** The few pages a person sees while signing in: plain HTML, no script, never framed or cached. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page with a message and, with `form`, the device confirmation form. */
export function page(res: NodeResponse, status: number, title: string, message: string, form?: { action: string; userCode: string }): void {
  const formHtml = form
    ? `<form method="post" action="${escape(form.action)}"><label>Code <input name="user_code" value="${escape(form.userCode)}" autocomplete="off" required></label> <button type="submit">Continue</button></form>`
    : "";
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head><body><h1>${escape(title)}</h1><p>${escape(message.trim())}</p>${formHtml}</body></html>`;
  res.writeHead(status, { ...PAGE_HEADERS, "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}

/** 302 to `location`, uncached. */
export function redirect(res: NodeResponse, location: string): void {
  res.writeHead(302, { location, "cache-control": "no-store", "content-length": "0", "referrer-policy": "no-referrer" });
  res.end();
}
