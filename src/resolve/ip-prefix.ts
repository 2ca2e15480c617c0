/**
 * What the strategies need beyond host/ip-address.ts (membership, families,
 * loopback and link-local through node:net BlockList): the network address of
 * a prefix, for messages and for rejecting a CIDR with host bits set.
 */
import type { Family } from '../host/host-facts.js';
import { canonicalAddress, familyOf } from '../host/ip-address.js';

export function familyLabel(family: Family): 'IPv4' | 'IPv6' {
  return family === 'ipv4' ? 'IPv4' : 'IPv6';
}

/** The network address of address/prefixLength, e.g. 198.18.0.7/24 → 198.18.0.0. */
export function networkOf(address: string, prefixLength: number): string {
  const family = familyOf(address);
  if (family === null) throw new Error(`'${address}' is not an IP address`);
  const bits = family === 'ipv4' ? 32 : 128;
  const value = family === 'ipv4' ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  const hostBits = BigInt(bits - prefixLength);
  const masked = (value >> hostBits) << hostBits;
  return family === 'ipv4' ? bigIntToIpv4(masked) : bigIntToIpv6(masked);
}

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((sum, octet) => (sum << 8n) + BigInt(Number(octet)), 0n);
}

function bigIntToIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

function ipv6ToBigInt(address: string): bigint {
  let text = address.split('%')[0] ?? address;
  // An embedded IPv4 tail (::ffff:198.18.0.1) is two 16-bit groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1]) {
    const v4 = ipv4ToBigInt(tail[1]);
    text = `${text.slice(0, -tail[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].reduce(
    (sum, group) => (sum << 16n) + BigInt(`0x${group}`),
    0n,
  );
}

function bigIntToIpv6(value: bigint): string {
  const groups = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n)
    groups.push(((value >> shift) & 0xffffn).toString(16));
  return canonicalAddress(groups.join(':'));
}
