/**
 * Address-literal tests shared by the facts reader and the route lookup.
 * Prefix tests go through node:net BlockList (STYLE.md: prefer the platform),
 * which compares binary addresses, so `2001:db8::1` and `2001:0db8:0:0::1` agree.
 */
import { BlockList, isIP } from 'node:net';
import type { Family } from './host-facts.js';

/** An IPv6 zone (`fe80::1%eth0`) names an interface, not part of the address. */
export function withoutZone(address: string): string {
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

/** The family of an address literal; null when the text is not one. */
export function familyOf(address: string): Family | null {
  const version = isIP(withoutZone(address));
  if (version === 4) return 'ipv4';
  if (version === 6) return 'ipv6';
  return null;
}

/** Whether `address` lies in `network/prefixLength` of the given family. */
export function prefixContains(
  network: string,
  prefixLength: number,
  family: Family,
  address: string,
): boolean {
  // BlockList also matches an IPv4-mapped IPv6 address against an IPv4 rule;
  // a route only ever answers for its own family, so the families must agree first.
  if (familyOf(address) !== family) return false;
  const block = new BlockList();
  block.addSubnet(network, prefixLength, family);
  return block.check(withoutZone(address), family);
}

/** Whether two literals are the same address, whatever their spelling. */
export function sameAddress(a: string, b: string): boolean {
  const family = familyOf(a);
  return family !== null && prefixContains(a, family === 'ipv4' ? 32 : 128, family, b);
}

/** The full prefix length of a family: a host route. */
export function hostPrefixLength(family: Family): number {
  return family === 'ipv4' ? 32 : 128;
}
