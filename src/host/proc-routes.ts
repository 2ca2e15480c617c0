/**
 * The routing table from /proc, for hosts without iproute2.
 *
 * /proc/net/route (net/ipv4/fib_trie.c fib_route_seq_show) lists the main
 * table only, one line per route, with addresses as the raw __be32 printed by
 * %08X, i.e. byte-reversed on little-endian machines; broadcast and multicast
 * routes are left out by the kernel, unreachable/prohibit ones carry
 * RTF_REJECT, and a route without a device (blackhole) shows "*".
 *
 * /proc/net/ipv6_route (net/ipv6/route.c ipv6_route_native_seq_show) lists
 * every table: dest, dest prefix length, source, source prefix length,
 * gateway, metric, refcnt, use, flags (RTF_*), device, all hex.
 */
import { readFileSync } from 'node:fs';
import { SocketAddress } from 'node:net';
import { endianness as hostEndianness } from 'node:os';
import { join } from 'node:path';
import { attempt } from './attempt.js';
import type { RouteEntry } from './host-facts.js';

/** include/uapi/linux/route.h and include/uapi/linux/ipv6_route.h */
const RTF_GATEWAY = 0x0002;
const RTF_REJECT = 0x0200;
const RTF_ANYCAST = 0x0010_0000;
const RTF_CACHE = 0x0100_0000;
const RTF_LOCAL = 0x8000_0000;

const IPV4_HEX = /^[0-9A-Fa-f]{8}$/;
const IPV6_HEX = /^[0-9A-Fa-f]{32}$/;

/**
 * This host's routing table, from /proc (the main table for IPv4, every table
 * for IPv6): a file read on every host and in every slim image, where
 * `ip route show table all` would cost two process spawns on every
 * invocation. The table only serves replaying a snapshot; live resolution
 * asks the kernel itself (`ip route get`, routes.ts), policy rules included.
 * Read synchronously, as sysfs is (sysfs-interface.ts): procfs formats from
 * kernel memory, and node:fs/promises would be loaded for these two reads
 * alone (with readline, which it requires).
 */
export function readProcRouteTable(procRoot: string): RouteEntry[] {
  // A kernel without IPv6 has no ipv6_route; an empty table is the truth there.
  const v4 = attempt(() => readFileSync(join(procRoot, 'net/route'), 'utf8')) ?? '';
  const v6 = attempt(() => readFileSync(join(procRoot, 'net/ipv6_route'), 'utf8')) ?? '';
  return [...parseProcNetRoute(v4), ...parseProcIpv6Route(v6)];
}

/** Parses /proc/net/route. `endianness` is the byte order the kernel printed with (this host's). */
export function parseProcNetRoute(
  text: string,
  endianness: 'BE' | 'LE' = hostEndianness(),
): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    const [iface, destinationHex, gatewayHex, flagsHex, , , metricText, maskHex] = line
      .trim()
      .split(/\s+/);
    if (iface === undefined || iface === '*' || maskHex === undefined) continue;
    const flags = Number.parseInt(flagsHex ?? '', 16);
    const destination = ipv4FromProcHex(destinationHex ?? '', endianness);
    const gateway = ipv4FromProcHex(gatewayHex ?? '', endianness);
    const mask = ipv4FromProcHex(maskHex, endianness);
    const metric = Number(metricText);
    if (destination === null || mask === null || Number.isNaN(flags) || !Number.isInteger(metric)) {
      continue;
    }
    if (flags & RTF_REJECT) continue;
    routes.push({
      family: 'ipv4',
      destination,
      prefixLength: prefixLengthOfMask(mask),
      interface: iface,
      gateway: flags & RTF_GATEWAY ? gateway : null,
      metric,
      type: 'unicast',
    });
  }
  return routes;
}

/** Parses /proc/net/ipv6_route. */
export function parseProcIpv6Route(text: string): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const [
      destinationHex,
      prefixHex,
      ,
      sourcePrefixHex,
      gatewayHex,
      metricHex,
      ,
      ,
      flagsHex,
      iface,
    ] = fields as [string, string, string, string, string, string, string, string, string, string];
    const destination = ipv6FromProcHex(destinationHex);
    const gateway = ipv6FromProcHex(gatewayHex);
    const prefixLength = Number.parseInt(prefixHex, 16);
    const metric = Number.parseInt(metricHex, 16);
    const flags = Number.parseInt(flagsHex, 16);
    if (destination === null || [prefixLength, metric, flags].some(Number.isNaN)) continue;
    if (flags & (RTF_REJECT | RTF_CACHE | RTF_ANYCAST)) continue;
    // A source-specific route (from ... ) applies only to some senders; the
    // multicast routes ff00::/8 are typed RTN_MULTICAST, which /proc does not show.
    if (
      Number.parseInt(sourcePrefixHex, 16) !== 0 ||
      isMulticastPrefix(destination, prefixLength)
    ) {
      continue;
    }
    routes.push({
      family: 'ipv6',
      destination,
      prefixLength,
      interface: iface,
      gateway: gateway === '::' ? null : gateway,
      metric,
      type: flags & RTF_LOCAL ? 'local' : 'unicast',
    });
  }
  return routes;
}

function ipv4FromProcHex(hex: string, endianness: 'BE' | 'LE'): string | null {
  if (!IPV4_HEX.test(hex)) return null;
  const bytes = Buffer.from(hex, 'hex');
  if (endianness === 'LE') bytes.reverse();
  return bytes.join('.');
}

function ipv6FromProcHex(hex: string): string | null {
  if (!IPV6_HEX.test(hex)) return null;
  const groups = hex.match(/.{4}/g) ?? [];
  // SocketAddress prints what ip prints (inet_ntop): RFC 5952, a mapped address as
  // ::ffff:a.b.c.d, where canonicalAddress (host/ip-address.ts) keeps hex groups.
  return new SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}

function prefixLengthOfMask(mask: string): number {
  return mask
    .split('.')
    .map((octet) => Number(octet).toString(2).replaceAll('0', '').length)
    .reduce((sum, bits) => sum + bits, 0);
}

function isMulticastPrefix(destination: string, prefixLength: number): boolean {
  return prefixLength >= 8 && destination.toLowerCase().startsWith('ff');
}
