/**
 * Address-literal tests shared by the facts reader and the route lookup.
 * Prefix tests go through node:net BlockList (STYLE.md: prefer the platform),
 * which compares binary addresses, so `2001:db8::1` and `2001:0db8:0:0::1` agree.
 *
 * An IPv6 literal is told by the parser BlockList itself uses (SocketAddress:
 * libuv's uv_inet_pton), not by net.isIPv6: that is one large regular
 * expression, which V8 compiles at its first use, and that compile cost each
 * start-up about 4 ms here (a fifth of `node -e 0`). isIPv4's is small.
 */
import { BlockList, isIPv4, SocketAddress } from 'node:net';
import type { Family, InterfaceAddress } from './host-facts.js';

/** An IPv6 zone (`fe80::1%eth0`) names an interface, not part of the address. */
export function withoutZone(address: string): string {
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

/** The family of an address literal; null when the text is not one. */
export function familyOf(address: string): Family | null {
  const bare = withoutZone(address);
  if (isIPv4(bare)) return 'ipv4';
  return bare.includes(':') && isIpv6Literal(bare) ? 'ipv6' : null;
}

function isIpv6Literal(bare: string): boolean {
  try {
    new SocketAddress({ address: bare, family: 'ipv6' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The one spelling of an address literal: for IPv6, RFC 5952's rules (lower
 * case, no leading zeros, the longest run of two or more zero groups written
 * `::`) as the WHATWG URL serializer applies them, always in hex groups, so an
 * IPv4-mapped address reads ::ffff:c612:1 where inet_ntop (ip, SocketAddress)
 * writes ::ffff:198.18.0.1. A zone is kept as written; IPv4, which isIP admits
 * only in dotted decimal, comes back as given. Text that is no address throws.
 */
export function canonicalAddress(address: string): string {
  const bare = withoutZone(address);
  const family = familyOf(bare);
  if (family === 'ipv4') return address;
  if (family !== 'ipv6') throw new Error(`'${address}' is not an IP address`);
  return `${new URL(`http://[${bare}]/`).hostname.slice(1, -1)}${address.slice(bare.length)}`;
}

/** Whether `address` lies in `network/prefixLength` (host bits of network ignored, as the kernel does). */
export function prefixContains(network: string, prefixLength: number, address: string): boolean {
  // BlockList also matches an IPv4-mapped IPv6 address against an IPv4 rule;
  // a prefix only ever holds addresses of its own family, so the families must agree first.
  const family = familyOf(network);
  if (family === null || familyOf(address) !== family) return false;
  const block = new BlockList();
  block.addSubnet(withoutZone(network), prefixLength, family);
  return block.check(withoutZone(address), family);
}

/** Whether two literals are the same address, whatever their spelling. */
export function sameAddress(a: string, b: string): boolean {
  // IPv4 first, without parsing: isIPv4 admits one spelling per address (dotted
  // decimal, no leading zeros), so equal text is the same address; and an IPv4
  // address is never an IPv6 one. Callers scan every interface's addresses for
  // one (explain on 1,000 interfaces: thousands of calls), where an IPv6
  // parse (SocketAddress, BlockList) each time was most of the decision's cost.
  const bareA = withoutZone(a);
  const bareB = withoutZone(b);
  if (isIPv4(bareA)) return bareA === bareB;
  if (isIPv4(bareB)) return false;
  const family = familyOf(a);
  return family !== null && prefixContains(a, hostPrefixLength(family), b);
}

/** RFC 1122 loopback (127.0.0.0/8, ::1) and RFC 3927 / RFC 4291 link-local (169.254.0.0/16, fe80::/10). */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

function inList(list: BlockList, address: string): boolean {
  const family = familyOf(address);
  return family !== null && list.check(withoutZone(address), family);
}

export function isLoopbackAddress(address: string): boolean {
  return inList(loopback, address);
}

/**
 * The unspecified address (0.0.0.0, ::; RFC 1122, RFC 4291): as a
 * destination, Linux takes it for this host (a connect to it reaches a
 * local listener), so a master given so is this host.
 */
export function isUnspecifiedAddress(address: string): boolean {
  const family = familyOf(address);
  return family !== null && sameAddress(address, family === 'ipv4' ? '0.0.0.0' : '::');
}

export function isLinkLocalAddress(address: string): boolean {
  return inList(linkLocal, address);
}

/**
 * The scope of an interface address (SPEC "Usable": not loopback, not
 * link-local). Loopback is 127.0.0.0/8 and ::1 (RFC 1122, RFC 4291);
 * link-local is 169.254.0.0/16 (RFC 3927) and fe80::/10 (RFC 4291).
 */
export function addressScope(address: string): InterfaceAddress['scope'] {
  if (isLoopbackAddress(address)) return 'host';
  if (isLinkLocalAddress(address)) return 'link';
  return 'global';
}

/** The full prefix length of a family: a host route. */
export function hostPrefixLength(family: Family): number {
  return family === 'ipv4' ? 32 : 128;
}

/**
 * The interface that holds `address`, compared canonically (2001:DB8::7 is
 * 2001:db8::7; a zone is ignored): the one place that question is answered.
 */
export function interfaceHolding<T extends { addresses: readonly { address: string }[] }>(
  interfaces: readonly T[],
  address: string,
): T | undefined {
  return interfaces.find((iface) =>
    iface.addresses.some((held) => sameAddress(held.address, address)),
  );
}
