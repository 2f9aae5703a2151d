import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard (docs/webhooks-and-schedules.md, Targets): outbound calls made for users (http steps, webhooks) reach only global
 * unicast addresses. An IPv6 address that carries an IPv4 one (mapped, compatible, 6to4, NAT64,
 * IPv4-translated, Teredo) is judged by the IPv4 it carries, so `[::127.0.0.1]` is loopback.
 */

/** The IPv4 addresses an IPv6 address carries, or null when it carries none. */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const bytes = address.toByteArray();
  const v4 = (offset: number, xor = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ xor));
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const words = address.parts;
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return [v4(12)]; // ::ffff:a.b.c.d (mapped)
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return [v4(12)]; // ::ffff:0:a.b.c.d (translated)
  if (zero(0, 12)) return [v4(12)]; // ::a.b.c.d (compatible; also :: and ::1, which are not global either)
  if (words[0] === 0x2002) return [v4(2)]; // 6to4 2002:AABB:CCDD::/48
  if (words[0] === 0x64 && words[1] === 0xff9b) return [v4(12)]; // NAT64 64:ff9b::/96 (and 64:ff9b:1::/48, judged the same way)
  if (words[0] === 0x2001 && words[1] === 0) return [v4(4), v4(12, 0xff)]; // Teredo: server, and the client XOR-ed
  return null;
}

function isGlobalIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/** True only for a global unicast address (IPv4, or IPv6 in 2000::/3 outside the special ranges). */
export function isPublicAddress(raw: string): boolean {
  if (net.isIP(raw) === 0) return false;
  const address = ipaddr.parse(raw);
  if (address.kind() === 'ipv4') return isGlobalIPv4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const carried = carriedIPv4(v6);
  if (carried) return carried.every(isGlobalIPv4);
  return v6.range() === 'unicast' && v6.match(ipaddr.IPv6.parse('2000::'), 3);
}

/** The opposite of isPublicAddress (kept for callers that ask the question this way round). */
export function isNonPublicAddress(address: string): boolean {
  return !isPublicAddress(address);
}

/** A refusal whose message is safe to show the user: it names their host, never what it resolved to. */
export class NetGuardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetGuardError';
  }
}

/**
 * Resolves a URL's host once and checks every address it has; connect to exactly those addresses
 * (see pinnedLookup) so a second DNS answer cannot differ (rebinding).
 */
export async function resolvePublicTarget(url: URL, allowPrivate: boolean): Promise<dns.LookupAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: dns.LookupAddress[];
  try {
    addresses = net.isIP(host)
      ? [{ address: host, family: net.isIP(host) }]
      : await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    throw new NetGuardError(`cannot resolve ${host}`);
  }
  if (addresses.length === 0) throw new NetGuardError(`cannot resolve ${host}`);
  if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
    throw new NetGuardError(
      `refusing to call ${host}: it is not a public address (private, loopback, link-local or reserved)`,
    );
  }
  return addresses;
}

/** A `lookup` for http(s).request that answers with the addresses already checked. */
export function pinnedLookup(addresses: dns.LookupAddress[]): net.LookupFunction {
  return ((_hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as unknown as net.LookupFunction;
}
