/**
 * GIDs as NCCL 2.22 judges them (src/transport/net_ib.cc, v2.22.3-1), from
 * the text sysfs prints (%pI6: eight groups of four hex digits), as eight
 * 16-bit words in network order.
 */
import type { Family } from '../host/host-facts.js';
import { canonicalAddress } from '../host/ip-address.js';

export type GidWords = readonly number[];

const ZERO: GidWords = [0, 0, 0, 0, 0, 0, 0, 0];

export function gidWords(text: string | null | undefined): GidWords {
  if (text === null || text === undefined) return ZERO;
  const groups = text.split(':');
  return groups.length === 8 ? groups.map((group) => Number.parseInt(group, 16) || 0) : ZERO;
}

/** getGidAddrFamily: an IPv4-mapped address (or IPv4-mapped multicast, ff0e::ffff:a.b.c.d) is AF_INET. */
export function gidFamily(words: GidWords): Family {
  const [w0, w1, w2, w3, w4, w5] = words;
  const mappedTail = w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0xffff;
  const mapped = w0 === 0 && w1 === 0 && mappedTail;
  const mappedMulticast = w0 === 0xff0e && w1 === 0 && mappedTail;
  return mapped || mappedMulticast ? 'ipv4' : 'ipv6';
}

/** configuredGid: neither all zeros nor exactly fe80::. */
function configuredGid(words: GidWords): boolean {
  const trailer = words.slice(2).some((word) => word !== 0);
  const head = words[0] !== 0 || words[1] !== 0;
  return !(!head && !trailer) && !(words[0] === 0xfe80 && words[1] === 0 && !trailer);
}

/** linkLocalGid: the first 64 bits are fe80:0000:0000:0000. */
export function linkLocalGid(words: GidWords): boolean {
  return words[0] === 0xfe80 && words[1] === 0 && words[2] === 0 && words[3] === 0;
}

/** validGid: configured and not link-local. */
export function validGid(words: GidWords): boolean {
  return configuredGid(words) && !linkLocalGid(words);
}

/** The address a GID carries: dotted IPv4 for a mapped one, RFC 5952 text otherwise. */
export function gidAddress(words: GidWords): string {
  if (gidFamily(words) === 'ipv4') {
    const [w6 = 0, w7 = 0] = words.slice(6);
    return [w6 >> 8, w6 & 0xff, w7 >> 8, w7 & 0xff].join('.');
  }
  return canonicalAddress(words.map((word) => word.toString(16)).join(':'));
}

/** ncclIbRoceGetVersionNum: gid_attrs/types/I read as 1 ("IB/RoCE v1", "RoCE v1") or 2 ("RoCE v2"). */
export function roceVersion(type: string | null): 1 | 2 | null {
  if (type === null) return null;
  if (type.startsWith('IB/RoCE v1') || type.startsWith('RoCE v1')) return 1;
  return type.startsWith('RoCE v2') ? 2 : null;
}

/**
 * matchGidAddrPrefix for NCCL_IB_ADDR_RANGE: IPv4 compares the GID's last 32
 * bits, IPv6 its leading bits; no range matches every GID, and a negative
 * prefix length none.
 */
export function gidInRange(
  words: GidWords,
  family: Family,
  range: { words: GidWords; prefixLength: number } | null,
): boolean {
  if (range === null) return true;
  if (range.prefixLength < 0) return false;
  const [gid, base] =
    family === 'ipv4' ? [words.slice(6), range.words.slice(6)] : [words, range.words];
  let bits = range.prefixLength;
  for (let i = 0; bits > 0 && i < gid.length; i += 1, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((gid[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** An address literal as GID words: IPv4 mapped (::ffff:a.b.c.d), IPv6 expanded. */
export function addressWords(address: string): GidWords {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    return [0, 0, 0, 0, 0, 0xffff, (a << 8) | b, (c << 8) | d];
  }
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  const mapped =
    tail === undefined ? [] : [...addressWords(tail).slice(6)].map((w) => w.toString(16));
  const text = tail === undefined ? address : address.slice(0, -tail.length).replace(/:$/, '');
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = [...(rest === undefined || rest === '' ? [] : rest.split(':')), ...mapped];
  const zeros = Array(8 - left.length - right.length).fill('0');
  return [...left, ...(rest === undefined ? [] : zeros), ...right].map(
    (g) => Number.parseInt(g, 16) || 0,
  );
}
