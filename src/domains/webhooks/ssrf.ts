// Server-side request forgery guard of webhook URLs: https only, and every address the host
// resolves to must be public (not loopback, private, link-local, CGNAT, cloud metadata, multicast,
// reserved or documentation ranges). Checked when an endpoint is saved and again when a delivery
// connects: the connection uses the address that was checked (a DNS answer that changed in
// between, "DNS rebinding", cannot slip a private address in). WEBHOOKS_ALLOW_PRIVATE=true turns
// the guard off for development and tests.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { AppError } from "../../errors.js";
import { longerThan } from "../../text.js";

const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT (also Alibaba's metadata address 100.100.100.200)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, AWS/GCP/Azure metadata 169.254.169.254
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
] as const)
  blocked.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  // Unspecified (::), loopback (::1) and the deprecated IPv4-compatible form (::a.b.c.d, RFC 4291
  // 2.5.5.1): `https://[::a00:1]/` is 10.0.0.1 to some stacks, and no public host uses the range.
  ["::", 96],
  ["64:ff9b::", 96], // NAT64: embeds an IPv4 address
  ["64:ff9b:1::", 48],
  ["100::", 64], // discard
  ["2001::", 23], // IETF protocol assignments (Teredo ...)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an IPv4 address
  ["fc00::", 7], // unique local (AWS's metadata fd00:ec2::254 is in here)
  ["fe80::", 10], // link-local
  ["fec0::", 10],
  ["ff00::", 8], // multicast
] as const)
  blocked.addSubnet(net, bits, "ipv6");

/** Whether `ip` (v4 or v6) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  if (family === 6) {
    // IPv4-mapped (::ffff:a.b.c.d) forms are judged as the IPv4 address; IPv4-compatible ones
    // (::a.b.c.d) fall in the refused ::/96.
    const mapped = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return isPublicAddress(mapped[1]!);
    if (/^::ffff:/i.test(ip)) return false;
    return !blocked.check(ip, "ipv6");
  }
  return !blocked.check(ip, "ipv4");
}

const bad = (message: string) => new AppError(400, `url ${message}`, [{ path: "url", message }]);

/** The URL as the service will call it, or a 400 saying why not. Resolves the host (public addresses only). */
export async function checkWebhookUrl(raw: unknown, allowPrivate: boolean): Promise<string> {
  if (typeof raw !== "string" || raw.trim() === "") throw bad("is required (an https:// URL)");
  if (longerThan(raw, 2_048)) throw bad("must be at most 2048 characters");
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw bad("is not a valid URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) throw bad("must use https");
  if (url.username || url.password) throw bad("must not carry credentials");
  if (!allowPrivate) {
    const addresses = await resolve(url.hostname).catch(() => {
      throw bad(`host '${url.hostname}' could not be resolved`);
    });
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    // The address itself is not echoed: the answer would map the internal DNS for whoever tries names.
    if (refused) throw bad(`host '${url.hostname}' resolves to an address that is not public: webhooks are sent to public addresses only`);
  }
  return url.toString();
}

function resolve(hostname: string): Promise<LookupAddress[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) return Promise.resolve([{ address: host, family: isIP(host) }]);
  return new Promise((ok, fail) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? fail(err) : ok(addresses))));
}

/** A literal IP host that is not public (Node connects to literals without calling `lookup`). */
export function refusedLiteral(hostname: string): string | null {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  return isIP(host) && !isPublicAddress(host) ? host : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses non-public answers: the socket connects only to a checked address. */
export function guardedLookup(hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback): void {
  const opts = typeof options === "number" ? { family: options } : (options ?? {});
  dnsLookup(hostname, { ...opts, all: true, verbatim: true } as never, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, opts.all ? [] : "");
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || !addresses.length) {
      // Without the address: the message is the attempt's `error` in the delivery log (see checkWebhookUrl).
      const e: NodeJS.ErrnoException = new Error(refused ? `${hostname} resolves to an address that is not public` : `${hostname} resolves to no address`);
      e.code = "EADDRNOTPUBLIC";
      return callback(e, opts.all ? [] : "");
    }
    if (opts.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
