import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * The server's only outbound HTTP client (the token exchange's discovery documents and JWKS):
 * GET of a JSON document where a caller's data names the URL, so it guards against being
 * pointed at the server's own network (SSRF).
 *
 * - `https:` only, unless `allowHttp`.
 * - The address actually connected to must be public (not loopback, private, link-local, CGNAT,
 *   multicast, reserved, ...) unless `allowPrivateAddresses`: an IP literal is checked as written,
 *   a host name by the addresses DNS gives for it, in the connection's own lookup (so a name that
 *   resolves differently on a second lookup cannot slip through). Any non-public address refuses.
 * - No redirects: any answer but 200 is an error.
 * - One deadline, `timeoutMs`, for the whole exchange (connect, headers and body), and at most
 *   `maxBytes` of body.
 */
export interface OutboundPolicy {
  allowHttp: boolean;
  allowPrivateAddresses: boolean;
  timeoutMs: number;
  maxBytes: number;
}

/** An outbound fetch refused or failed; the message is for the log. */
export class OutboundFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundFetchError";
  }
}

/** Addresses that are not on the public internet (IANA special-purpose registries). */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address an IPv6 address embeds (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
function embeddedIpv4(ipv6: string): string | undefined {
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ipv6);
  if (dotted) return dotted[1];
  const groups = expandIpv6(ipv6);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return v4(groups[6], groups[7]); // ::ffff:a.b.c.d, ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6], groups[7]); // NAT64
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]); // 6to4
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address in hex notation; undefined for a dotted tail. */
function expandIpv6(ipv6: string): number[] | undefined {
  const address = ipv6.split("%")[0];
  if (address.includes(".")) return undefined;
  const [head, tail] = address.split("::");
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = address.includes("::") ? new Array<number>(8 - left.length - right.length).fill(0) : [];
  const groups = [...left, ...fill, ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Whether an IP address (v4 or v6 text) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined && !isPublicAddress(v4)) return false;
  return !NON_PUBLIC.check(address.split("%")[0], "ipv6");
}

/** A connection lookup that resolves as usual and refuses when any address of the name is not public. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const reason = refused ? `resolves to ${refused.address}, which is not a public address` : "has no address";
      return callback(Object.assign(new Error(`${hostname} ${reason}`), { code: "ERR_NON_PUBLIC_ADDRESS" }), "", 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/** Checks a URL against the policy before anything is sent; throws OutboundFetchError. */
export function checkOutboundUrl(url: URL, policy: Pick<OutboundPolicy, "allowHttp" | "allowPrivateAddresses">): void {
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) {
    throw new OutboundFetchError(`${url.href} is not an https URL${url.protocol === "http:" ? " (plain http is not allowed: serve --allow-http-issuers)" : ""}`);
  }
  if (url.username !== "" || url.password !== "") throw new OutboundFetchError(`${url.href} carries credentials`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!policy.allowPrivateAddresses && isIP(host) !== 0 && !isPublicAddress(host)) {
    throw new OutboundFetchError(`${url.href} names ${host}, which is not a public address (serve --allow-private-issuers)`);
  }
}

/** GETs `url` and parses its body as JSON, within the policy. Throws OutboundFetchError. */
export function fetchJson(url: URL, policy: OutboundPolicy): Promise<unknown> {
  checkOutboundUrl(url, policy);
  const client = url.protocol === "https:" ? https : http;
  return new Promise<unknown>((resolve, reject) => {
    let settled = false;
    const deadline = setTimeout(() => finish(new OutboundFetchError(`${url.href} did not answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    function finish(error: Error | undefined, value?: unknown) {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      if (error) reject(error instanceof OutboundFetchError ? error : new OutboundFetchError(`fetching ${url.href} failed: ${error.message}`));
      else resolve(value);
    }
    let req: http.ClientRequest;
    try {
      req = client.request(
        url,
        {
          method: "GET",
          headers: { accept: "application/json" },
          agent: false,
          ...(policy.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }),
        },
        (res) => {
          if (res.statusCode !== 200) return finish(new OutboundFetchError(`${url.href} answered HTTP ${res.statusCode} (redirects are not followed)`));
          const declared = Number(res.headers["content-length"]);
          if (Number.isFinite(declared) && declared > policy.maxBytes) return finish(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > policy.maxBytes) return finish(new OutboundFetchError(`${url.href} is larger than ${policy.maxBytes} bytes`));
            chunks.push(chunk);
          });
          res.on("error", (error) => finish(error));
          res.on("end", () => {
            try {
              finish(undefined, JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown);
            } catch {
              finish(new OutboundFetchError(`${url.href} is not JSON`));
            }
          });
        },
      );
    } catch (error) {
      settled = true;
      clearTimeout(deadline);
      return reject(new OutboundFetchError(`fetching ${url.href} failed: ${(error as Error).message}`));
    }
    req.on("error", (error) => finish(error));
    req.end();
  });
}
