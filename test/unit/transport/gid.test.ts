/**
 * GIDs as NCCL 2.22 judges them (src/transport/net_ib.cc getGidAddrFamily,
 * configuredGid, linkLocalGid, validGid, ncclIbRoceGetVersionNum), from the
 * text sysfs prints.
 */
import { describe, expect, it } from 'vitest';
import {
  addressWords,
  gidAddress,
  gidFamily,
  gidWords,
  linkLocalGid,
  roceVersion,
  validGid,
} from '../../../src/transport/gid.js';

describe('GIDs', () => {
  it.each([
    ['0000:0000:0000:0000:0000:ffff:c612:0702', 'ipv4', true, false, '198.18.7.2'],
    // IPv4-mapped multicast counts as IPv4 too.
    ['ff0e:0000:0000:0000:0000:ffff:e000:0001', 'ipv4', true, false, '224.0.0.1'],
    ['2001:0db8:0007:0000:0000:0000:0000:0002', 'ipv6', true, false, '2001:db8:7::2'],
    ['fe80:0000:0000:0000:0000:c6ff:fe12:0702', 'ipv6', false, true, 'fe80::c6ff:fe12:702'],
    // fe80:: exactly is not configured; all zeros is an empty slot.
    ['fe80:0000:0000:0000:0000:0000:0000:0000', 'ipv6', false, true, 'fe80::'],
    ['0000:0000:0000:0000:0000:0000:0000:0000', 'ipv6', false, false, '::'],
  ] as const)('%s: %s, valid %s, link-local %s, %s', (text, family, valid, local, address) => {
    const words = gidWords(text);
    expect(gidFamily(words)).toBe(family);
    expect(validGid(words)).toBe(valid);
    expect(linkLocalGid(words)).toBe(local);
    expect(gidAddress(words)).toBe(address);
  });

  it.each([
    ['198.18.7.2', '0000:0000:0000:0000:0000:ffff:c612:0702'],
    ['2001:db8:7::2', '2001:0db8:0007:0000:0000:0000:0000:0002'],
    ['::ffff:198.18.7.2', '0000:0000:0000:0000:0000:ffff:c612:0702'],
    ['fe80::1', 'fe80:0000:0000:0000:0000:0000:0000:0001'],
  ])('reads the address %s as the GID %s', (address, gid) => {
    expect(addressWords(address)).toEqual(gidWords(gid));
  });

  it.each([
    ['IB/RoCE v1', 1],
    ['RoCE v1', 1],
    ['RoCE v2', 2],
    [null, null],
  ] as const)('reads the type %j as RoCE version %j', (type, version) => {
    expect(roceVersion(type)).toBe(version);
  });
});
