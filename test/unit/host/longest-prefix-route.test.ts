import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HostFacts, InterfaceFacts, RouteEntry } from '../../../src/host/host-facts.js';
import { prefixContains } from '../../../src/host/ip-address.js';
import { longestPrefixRoute } from '../../../src/host/longest-prefix-route.js';
import { routeTo } from '../../../src/host/routes.js';

function iface(
  name: string,
  kind: InterfaceFacts['kind'],
  addresses: Array<[string, number]>,
): InterfaceFacts {
  return {
    name,
    operstate: 'up',
    carrier: true,
    addresses: addresses.map(([address, prefixLength]) => ({
      address,
      prefixLength,
      family: address.includes(':') ? 'ipv6' : 'ipv4',
      scope:
        address.startsWith('127.') || address === '::1'
          ? 'host'
          : address.startsWith('fe80')
            ? 'link'
            : 'global',
    })),
    speedMbps: null,
    mtu: 1500,
    kind,
    master: null,
    rdma: null,
  };
}

function route(
  destination: string,
  prefixLength: number,
  dev: string,
  extra: Partial<RouteEntry> = {},
): RouteEntry {
  return {
    family: destination.includes(':') ? 'ipv6' : 'ipv4',
    destination,
    prefixLength,
    interface: dev,
    gateway: null,
    metric: 0,
    type: 'unicast',
    ...extra,
  };
}

// A host with a data NIC, a management NIC and docker0, as /proc shows it (no local table).
const facts: HostFacts = {
  hostname: 'node01',
  interfaces: [
    iface('lo', 'loopback', [
      ['127.0.0.1', 8],
      ['::1', 128],
    ]),
    iface('ens3f0', 'physical', [
      ['198.18.10.5', 24],
      ['2001:db8:10::5', 64],
    ]),
    iface('eno1', 'physical', [['203.0.113.5', 24]]),
    iface('docker0', 'bridge', [['198.19.0.1', 16]]),
  ],
  routes: [
    route('198.18.10.0', 24, 'ens3f0'),
    route('203.0.113.0', 24, 'eno1'),
    route('198.19.0.0', 16, 'docker0'),
    route('198.19.7.0', 24, 'ens3f0', { gateway: '198.18.10.1' }),
    route('0.0.0.0', 0, 'eno1', { gateway: '203.0.113.1', metric: 100 }),
    route('0.0.0.0', 0, 'ens3f0', { gateway: '198.18.10.1', metric: 50 }),
    route('2001:db8:10::', 64, 'ens3f0', { metric: 256 }),
    route('2001:db8::', 32, 'eno1', { gateway: '2001:db8:10::1', metric: 1024 }),
  ],
};

describe('longestPrefixRoute', () => {
  it('answers a directly connected subnet with the address on it as source', () => {
    expect(longestPrefixRoute(facts.routes, '198.18.10.77', facts)).toEqual({
      destination: '198.18.10.77',
      interface: 'ens3f0',
      source: '198.18.10.5',
      gateway: null,
      type: 'unicast',
    });
  });

  it('prefers the longer of two overlapping prefixes', () => {
    expect(longestPrefixRoute(facts.routes, '198.19.7.9', facts)).toMatchObject({
      interface: 'ens3f0',
      gateway: '198.18.10.1',
      source: '198.18.10.5',
    });
    expect(longestPrefixRoute(facts.routes, '198.19.8.9', facts)).toMatchObject({
      interface: 'docker0',
    });
  });

  it('takes the default route of lowest metric', () => {
    expect(longestPrefixRoute(facts.routes, '192.0.2.50', facts)).toMatchObject({
      interface: 'ens3f0',
      gateway: '198.18.10.1',
      type: 'unicast',
    });
  });

  it('routes IPv6 by prefix too', () => {
    expect(longestPrefixRoute(facts.routes, '2001:db8:10::99', facts)).toMatchObject({
      interface: 'ens3f0',
      source: '2001:db8:10::5',
      gateway: null,
    });
    expect(longestPrefixRoute(facts.routes, '2001:db8:77::1', facts)).toMatchObject({
      interface: 'eno1',
      gateway: '2001:db8:10::1',
      // eno1 holds no IPv6 address: the kernel would have to pick one elsewhere, the snapshot cannot say.
      source: null,
    });
  });

  it('answers an address of this host as local, through the interface that holds it', () => {
    expect(longestPrefixRoute(facts.routes, '203.0.113.5', facts)).toEqual({
      destination: '203.0.113.5',
      interface: 'eno1',
      source: '203.0.113.5',
      gateway: null,
      type: 'local',
    });
    expect(longestPrefixRoute(facts.routes, '2001:0db8:0010::0005', facts)).toMatchObject({
      interface: 'ens3f0',
      type: 'local',
    });
  });

  it('answers loopback addresses as local through lo, with or without a local table', () => {
    expect(longestPrefixRoute(facts.routes, '127.0.0.3', facts)).toEqual({
      destination: '127.0.0.3',
      interface: 'lo',
      source: '127.0.0.1',
      gateway: null,
      type: 'local',
    });
    const withLocalTable = [route('127.0.0.0', 8, 'lo', { type: 'local' }), ...facts.routes];
    expect(longestPrefixRoute(withLocalTable, '127.0.0.3', facts)).toMatchObject({
      interface: 'lo',
      type: 'local',
    });
  });

  it("consults the local table before any longer unicast prefix, as the kernel's rule 0 does", () => {
    const routes = [
      route('198.18.10.0', 24, 'ens3f0'),
      route('198.18.10.0', 23, 'lo', { type: 'local' }),
    ];
    const bare: HostFacts = { ...facts, interfaces: [iface('lo', 'loopback', [['127.0.0.1', 8]])] };
    expect(longestPrefixRoute(routes, '198.18.10.9', bare)).toMatchObject({
      type: 'local',
      interface: 'lo',
    });
  });

  it('has no answer when no route covers the address, or for a name', () => {
    const noDefault = facts.routes.filter((entry) => entry.prefixLength > 0);
    expect(longestPrefixRoute(noDefault, '192.0.2.50', facts)).toBeNull();
    expect(longestPrefixRoute(noDefault, '2001:db9::1', facts)).toBeNull();
    expect(longestPrefixRoute(facts.routes, 'node02', facts)).toBeNull();
  });

  it('always picks a covering route with no longer or cheaper rival (property)', () => {
    const routeArb = fc.record({
      octets: fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })),
      prefixLength: fc.integer({ min: 0, max: 32 }),
      metric: fc.integer({ min: 0, max: 3 }),
      dev: fc.constantFrom('a', 'b', 'c'),
    });
    fc.assert(
      fc.property(
        fc.array(routeArb, { maxLength: 12 }),
        fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })),
        (specs, [x, y]) => {
          const routes = specs.map((spec) =>
            route(`198.${spec.octets[0]}.${spec.octets[1]}.0`, spec.prefixLength, spec.dev, {
              metric: spec.metric,
            }),
          );
          const address = `198.${x}.${y}.1`;
          const empty: HostFacts = { hostname: 'h', interfaces: [], routes };
          const answer = longestPrefixRoute(routes, address, empty);
          const covering = routes.filter((entry) =>
            prefixContains(entry.destination, entry.prefixLength, address),
          );
          if (covering.length === 0) return answer === null;
          const longest = Math.max(...covering.map((entry) => entry.prefixLength));
          const cheapest = Math.min(
            ...covering
              .filter((entry) => entry.prefixLength === longest)
              .map((entry) => entry.metric),
          );
          const winner = covering.find(
            (entry) => entry.prefixLength === longest && entry.metric === cheapest,
          );
          return (
            answer !== null && answer.interface === winner?.interface && answer.type === 'unicast'
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('routeTo, replaying a snapshot', () => {
  it('answers each routable address in order and leaves out the rest', async () => {
    const noDefault: HostFacts = {
      ...facts,
      routes: facts.routes.filter((entry) => entry.prefixLength > 0),
    };
    const answers = await routeTo(
      ['198.18.10.7', '192.0.2.50', 'not-an-address', '203.0.113.5'],
      noDefault,
      false,
    );
    expect(answers.map((answer) => [answer.destination, answer.interface, answer.type])).toEqual([
      ['198.18.10.7', 'ens3f0', 'unicast'],
      ['203.0.113.5', 'eno1', 'local'],
    ]);
  });

  it('answers nothing for no addresses', async () => {
    expect(await routeTo([], facts, false)).toEqual([]);
  });
});
