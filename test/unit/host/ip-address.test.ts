import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addressScope,
  canonicalAddress,
  familyOf,
  hostPrefixLength,
  prefixContains,
  sameAddress,
} from '../../../src/host/ip-address.js';

describe('addressScope', () => {
  it.each([
    ['127.0.0.1', 'host'],
    ['127.255.0.9', 'host'],
    ['::1', 'host'],
    ['169.254.10.1', 'link'],
    ['169.255.0.1', 'global'],
    ['fe80::1', 'link'],
    ['fe80::1%eth0', 'link'],
    ['febf:ffff::1', 'link'],
    ['fec0::1', 'global'],
    ['198.18.0.1', 'global'],
    ['2001:db8::1', 'global'],
    ['128.0.0.1', 'global'],
  ] as const)('%s is %s', (address, scope) => {
    expect(addressScope(address)).toBe(scope);
  });
});

describe('address literals', () => {
  it('tells the family, ignoring an IPv6 zone', () => {
    expect(familyOf('198.18.0.1')).toBe('ipv4');
    expect(familyOf('fe80::1%ens3f0')).toBe('ipv6');
    expect(familyOf('node01')).toBeNull();
    expect(familyOf('198.18.0.256')).toBeNull();
  });

  it('tests prefixes per family, never an IPv4-mapped address against an IPv4 prefix', () => {
    expect(prefixContains('198.18.0.0', 15, '198.19.255.255')).toBe(true);
    expect(prefixContains('198.18.0.0', 15, '198.20.0.0')).toBe(false);
    expect(prefixContains('0.0.0.0', 0, '::ffff:198.18.0.1')).toBe(false);
    expect(prefixContains('2001:db8::', 32, '2001:db8:ffff::1')).toBe(true);
    expect(prefixContains('2001:db8::', 32, '2001:db9::1')).toBe(false);
  });

  it('compares addresses whatever their spelling', () => {
    expect(sameAddress('2001:db8::1', '2001:0db8:0000:0000:0000:0000:0000:0001')).toBe(true);
    expect(sameAddress('2001:db8::1', '2001:db8::2')).toBe(false);
    expect(sameAddress('198.18.0.1', '198.18.0.1')).toBe(true);
    expect(sameAddress('198.18.0.1', '::ffff:198.18.0.1')).toBe(false);
    expect(sameAddress('198.18.0.1%eth0', '198.18.0.1')).toBe(true);
    expect(sameAddress('198.18.0.1', '198.018.0.1')).toBe(false);
    expect(sameAddress('node01', 'node01')).toBe(false);
  });

  it('answers as a host prefix does, IPv4 told by its text alone', () => {
    // sameAddress skips the parse where either side is IPv4 (ip-address.ts); the
    // answer must stay what a /32 or /128 BlockList gives for every pair of texts.
    const byPrefix = (a: string, b: string) => {
      const family = familyOf(a);
      return family !== null && prefixContains(a, hostPrefixLength(family), b);
    };
    const address = fc.constantFrom(
      '198.18.0.1',
      '198.18.0.2',
      '198.018.0.1',
      '0.0.0.0',
      '::',
      '::ffff:198.18.0.1',
      '::ffff:c612:1',
      '2001:db8::1',
      '2001:DB8:0:0::1',
      'fe80::1',
      'node01',
      '',
    );
    const text = fc.tuple(address, fc.constantFrom('', '%eth0', '%')).map(([a, z]) => a + z);
    fc.assert(
      fc.property(text, text, (a, b) => sameAddress(a, b) === byPrefix(a, b)),
      { numRuns: 5_000 },
    );
  });

  it.each([
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['fe80:0:0:0:0:0:0:1%eth0', 'fe80::1%eth0'],
    ['::ffff:198.18.0.1', '::ffff:c612:1'],
    ['198.18.0.1', '198.18.0.1'],
  ])('writes %s as %s', (address, canonical) => {
    expect(canonicalAddress(address)).toBe(canonical);
  });

  it('has no canonical form for what is not an address', () => {
    expect(() => canonicalAddress('node01')).toThrow("'node01' is not an IP address");
  });
});

describe('familyOf against net.isIP', () => {
  // familyOf tells IPv6 with SocketAddress (uv_inet_pton) rather than isIPv6's regex: the two must agree.
  const nodeFamily = (text: string) => {
    const version = isIP(text.includes('%') ? text.slice(0, text.indexOf('%')) : text);
    return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
  };
  const pieces = fc.constantFrom(
    ...'0123456789abcdefABCDEF:.%'.split(''),
    'ffff',
    '::',
    '198.18.0.1',
    'eth0',
  );

  it('agrees on address-like text', () => {
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 14 }).map((parts) => parts.join('')),
        (text) => familyOf(text) === nodeFamily(text),
      ),
      { numRuns: 20_000 },
    );
  });

  it.each([
    '::',
    '::1',
    '1::',
    '2001:db8::1',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7::',
    '::ffff:198.18.0.1',
    '1:2:3:4:5:6:198.18.0.1',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    '12345::1',
    ':1',
    '1:',
    'fe80::1%eth0',
    '::ffff:198.18.0.256',
  ])('agrees on %s', (text) => {
    expect(familyOf(text)).toBe(nodeFamily(text));
  });
});
