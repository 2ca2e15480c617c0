import { describe, expect, it } from 'vitest';
import type {
  HostFacts,
  InterfaceFacts,
  RouteAnswer,
  RouteEntry,
} from '../../../src/host/host-facts.js';
import type { Decision } from '../../../src/resolve/decision.js';
import { checkLocal } from '../../../src/verify/check-local.js';

function nic(
  name: string,
  address: string,
  prefixLength: number,
  extra: Partial<InterfaceFacts> = {},
): InterfaceFacts {
  return {
    name,
    operstate: 'up',
    carrier: true,
    addresses: [
      { address, family: address.includes(':') ? 'ipv6' : 'ipv4', prefixLength, scope: 'global' },
    ],
    speedMbps: 10_000,
    mtu: 1500,
    kind: 'physical',
    master: null,
    rdma: null,
    ...extra,
  };
}

function route(destination: string, prefixLength: number, iface: string, metric = 0): RouteEntry {
  return {
    family: 'ipv4',
    destination,
    prefixLength,
    interface: iface,
    gateway: null,
    metric,
    type: 'unicast',
  };
}

const facts: HostFacts = {
  hostname: 'node2',
  interfaces: [
    nic('lo', '127.0.0.1', 8, { operstate: 'unknown', kind: 'loopback' }),
    nic('ens3f0', '198.18.10.2', 24),
    nic('eth1', '198.18.20.2', 24),
  ],
  routes: [
    route('198.18.10.0', 24, 'ens3f0'),
    route('198.18.20.0', 24, 'eth1'),
    route('198.18.10.1', 32, 'eth1'),
    route('203.0.113.0', 24, 'eth1'),
  ],
};

const decision: Decision = {
  interface: 'ens3f0',
  address: '198.18.10.2',
  family: 'ipv4',
  strategy: 'explicit',
  reason: 'test',
  trace: [],
};

const answer = (
  destination: string,
  iface: string,
  type: RouteAnswer['type'] = 'unicast',
): RouteAnswer => ({
  destination,
  interface: iface,
  source: null,
  gateway: null,
  type,
});

describe('checkLocal', () => {
  it('passes an up interface holding the chosen address, with the route through it', () => {
    const outcome = checkLocal(facts, decision, [answer('198.18.10.1', 'ens3f0')]);
    expect(outcome).toMatchObject({ ok: true, warnings: [] });
  });

  it('warns, naming both interfaces and every route covering the master, when the route leaves elsewhere', () => {
    const outcome = checkLocal(facts, decision, [answer('198.18.10.1', 'eth1')]);
    expect(outcome.ok).toBe(true);
    expect(outcome.warnings).toEqual([
      'the route to the master 198.18.10.1 leaves through eth1, not the chosen ens3f0; routes covering it: 198.18.10.0/24 dev ens3f0 metric 0; 198.18.10.1/32 dev eth1 metric 0',
    ]);
  });

  it("warns when this node is the master but the master's address sits on another interface", () => {
    const outcome = checkLocal(facts, decision, [answer('198.18.20.2', 'lo', 'local')]);
    expect(outcome.warnings).toEqual([
      'the master address 198.18.20.2 belongs to eth1, not to the chosen ens3f0: workers reach this node on eth1 while NCCL and Gloo use ens3f0',
    ]);
    expect(checkLocal(facts, decision, [answer('198.18.10.2', 'lo', 'local')]).warnings).toEqual(
      [],
    );
  });

  it.each([
    [
      'a missing interface',
      { ...decision, interface: 'ens9' },
      facts,
      'the chosen interface ens9 does not exist on this host',
    ],
    [
      'a down interface',
      decision,
      {
        ...facts,
        interfaces: [nic('ens3f0', '198.18.10.2', 24, { operstate: 'down', carrier: null })],
      },
      'the chosen interface ens3f0 is not up (operstate down, carrier unreadable)',
    ],
    [
      'an address gone from the interface',
      { ...decision, address: '198.18.10.9' },
      facts,
      'the chosen interface ens3f0 does not hold the chosen ipv4 address 198.18.10.9 (it holds 198.18.10.2)',
    ],
  ])('fails on %s', (_case, chosen, hostFacts, message) => {
    const outcome = checkLocal(hostFacts, chosen, []);
    expect(outcome).toMatchObject({ ok: false, message });
  });
});
