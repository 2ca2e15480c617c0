/**
 * Address arithmetic the strategies need, on top of node:net: membership goes
 * through BlockList (which also masks host bits the way the kernel does);
 * only the network address of a prefix, for messages and for rejecting a
 * CIDR with host bits set, is computed here.
 */
import { BlockList, isIP } from 'node:net';
import type { Family } from '../host/host-facts.js';

export function familyOf(address: string): Family | null {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}

export function familyLabel(family: Family): 'IPv4' | 'IPv6' {
  return family === 'ipv4' ? 'IPv4' : 'IPv6';
}

/** RFC 1122 loopback (127.0.0.0/8, ::1) and RFC 3927 / RFC 4291 link-local. */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

function check(list: BlockList, address: string): boolean {
  const family = familyOf(address);
  return family !== null && list.check(address, family);
}

export function isLoopbackAddress(address: string): boolean {
  return check(loopback, address);
}

export function isLinkLocalAddress(address: string): boolean {
  return check(linkLocal, address);
}

/** Whether address lies in network/prefixLength (host bits of network ignored, as the kernel does). */
export function prefixContains(network: string, prefixLength: number, address: string): boolean {
  const family = familyOf(network);
  if (family === null || familyOf(address) !== family) return false;
  const block = new BlockList();
  block.addSubnet(network, prefixLength, family);
  return block.check(address, family);
}

/** The same address in two spellings (2001:db8::1 and 2001:0db8:0:0::1). */
export function sameAddress(a: string, b: string): boolean {
  const family = familyOf(a);
  if (family === null || familyOf(b) !== family) return false;
  const block = new BlockList();
  block.addAddress(a, family);
  return block.check(b, family);
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
  // The WHATWG URL serializer writes the RFC 5952 canonical (compressed) form.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
