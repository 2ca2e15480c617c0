import { describe, expect, it } from 'vitest';
import type { Family, InterfaceFacts } from '../../../src/host/host-facts.js';
import {
  type Unusable,
  unusable,
  unusableText,
  usableAddress,
  usableAddresses,
} from '../../../src/resolve/usable.js';

/** The reason in words, as messages give it; null when usable. */
function unusableReason(iface: InterfaceFacts, family: Family): string | null {
  const why: Unusable | null = unusable(iface, family);
  return why === null ? null : unusableText(why);
}

import { type FixtureName, loadFacts } from '../../fixtures/facts/facts-fixtures.js';

function iface(fixture: FixtureName, name: string): InterfaceFacts {
  const found = loadFacts(fixture).interfaces.find((i) => i.name === name);
  if (found === undefined) throw new Error(`${fixture} has no ${name}`);
  return found;
}

describe('usable addresses and why not', () => {
  it.each<[FixtureName, string, Family, string | null, string | null]>([
    ['docker-host', 'eno1', 'ipv4', '198.18.4.21', null],
    ['docker-host', 'eno1', 'ipv6', null, 'link-local only'],
    ['docker-host', 'eno2', 'ipv4', null, 'down'],
    // Usable as such: the default excludes, not usability, keep docker0 out.
    ['docker-host', 'docker0', 'ipv4', '172.17.0.1', null],
    ['docker-host', 'veth1a2b3c4', 'ipv4', null, 'no IPv4 address'],
    ['docker-host', 'veth1a2b3c4', 'ipv6', null, 'link-local only'],
    ['docker-host', 'lo', 'ipv4', null, 'loopback'],
    ['bond-host', 'ens1f0', 'ipv4', null, 'bond member of bond0'],
    ['bond-host', 'ens2f0', 'ipv4', null, 'down (no carrier)'],
    ['bond-host', 'bond0', 'ipv4', '198.18.8.42', null],
    ['infiniband-node', 'ib0', 'ipv4', '198.18.32.17', null],
    ['infiniband-node', 'ib1', 'ipv4', null, 'down (no carrier)'],
    // 169.254/16 counts as link-local by value, though the kernel scoped it global.
    ['link-local-only', 'eth0', 'ipv4', null, 'link-local only'],
    ['link-local-only', 'eth1', 'ipv4', null, 'no IPv4 address'],
    ['ipv6-only', 'ens3', 'ipv6', '2001:db8:0:12::3', null],
    ['ipv6-only', 'ens3', 'ipv4', null, 'no IPv4 address'],
    // tun devices report operstate "unknown" for ever; tailscale0 is up.
    ['tailscale-host', 'tailscale0', 'ipv4', '100.101.102.103', null],
    ['tailscale-host', 'tailscale0', 'ipv6', 'fd7a:115c:a1e0::1234:5678', null],
    ['k8s-node', 'kube-ipvs0', 'ipv4', null, 'down (no carrier)'],
    ['k8s-node', 'flannel.1', 'ipv4', '10.244.3.0', null],
  ])('%s %s %s → %s (%s)', (fixture, name, family, address, reason) => {
    const facts = iface(fixture, name);
    expect(usableAddress(facts, family)?.address ?? null).toBe(address);
    expect(unusableReason(facts, family)).toBe(reason);
  });

  it('names a loopback address held by another interface', () => {
    const base = iface('docker-host', 'eno1');
    const odd = {
      ...base,
      addresses: [
        {
          address: '127.0.0.2',
          family: 'ipv4' as const,
          prefixLength: 8,
          scope: 'global' as const,
        },
      ],
    };
    expect(unusableReason(odd, 'ipv4')).toBe(
      'no usable IPv4 address (loopback or link-local only)',
    );
  });

  it('keeps every usable address in order and drops the link-local one', () => {
    const base = iface('master-node', 'ens3f0');
    const two = {
      ...base,
      addresses: [
        { address: 'fe80::1', family: 'ipv6' as const, prefixLength: 64, scope: 'link' as const },
        ...base.addresses,
        {
          address: '198.18.61.10',
          family: 'ipv4' as const,
          prefixLength: 24,
          scope: 'global' as const,
        },
      ],
    };
    expect(usableAddresses(two, 'ipv4').map((a) => a.address)).toEqual([
      '198.18.60.10',
      '198.18.61.10',
    ]);
    expect(usableAddresses(two, 'ipv6').map((a) => a.address)).toEqual(['2001:db8:60::10']);
  });

  it('gives a bond member nothing even when it holds an address', () => {
    const member = {
      ...iface('bond-host', 'ens1f0'),
      addresses: iface('bond-host', 'bond0').addresses,
    };
    expect(usableAddress(member, 'ipv4')).toBeNull();
  });
});
