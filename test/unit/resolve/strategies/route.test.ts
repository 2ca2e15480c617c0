import { describe, expect, it } from 'vitest';
import type { RouteAnswer } from '../../../../src/host/host-facts.js';
import type { ResolveContext, StrategyOutcome } from '../../../../src/resolve/decision.js';
import { buildExcludes } from '../../../../src/resolve/excludes.js';
import { route } from '../../../../src/resolve/strategies/route.js';
import {
  type FixtureName,
  loadFacts,
  makeContext,
} from '../../../fixtures/facts/facts-fixtures.js';

/** What `ip -j route get ADDRESS` answers on the fixture's host, as routes.ts hands it over. */
function via(
  destination: string,
  iface: string,
  source: string | null,
  gateway: string | null = null,
): RouteAnswer {
  return { destination, interface: iface, source, gateway, type: 'unicast' };
}
function local(destination: string): RouteAnswer {
  return { destination, interface: 'lo', source: destination, gateway: null, type: 'local' };
}
const toMaster = (
  host: string,
  addresses: string[],
  routesToMaster: RouteAnswer[],
): Partial<ResolveContext> => ({
  master: { host, addresses },
  routesToMaster,
});

describe('route', () => {
  it.each<[string, FixtureName, Partial<ResolveContext>, StrategyOutcome]>([
    ['no master', 'docker-host', {}, { outcome: 'skipped', reason: 'no master address known' }],
    [
      'no route',
      'link-local-only',
      toMaster('node-1', ['203.0.113.77'], []),
      { outcome: 'skipped', reason: 'the kernel has no IPv4 route to master 203.0.113.77' },
    ],
    [
      'the default route',
      'infiniband-node',
      toMaster(
        'dgx-a100-001',
        ['198.19.5.5'],
        [via('198.19.5.5', 'eth0', '203.0.113.17', '203.0.113.1')],
      ),
      {
        outcome: 'picked',
        interface: 'eth0',
        address: '203.0.113.17',
        reason: 'route to 198.19.5.5 leaves via eth0 (gateway 203.0.113.1)',
      },
    ],
    [
      'a directly connected network',
      'bond-host',
      toMaster('trn-node-01', ['198.18.16.1'], [via('198.18.16.1', 'bond0.2973', '198.18.16.42')]),
      {
        outcome: 'picked',
        interface: 'bond0.2973',
        address: '198.18.16.42',
        reason: 'route to 198.18.16.1 leaves via bond0.2973',
      },
    ],
    [
      // SPEC "Causes users meet": a VPN the master is reached through is the job's network.
      'the tailnet route leaves via a tunnel excluded only by default: it is the job’s network',
      'tailscale-host',
      toMaster('ws-lab-1', ['100.90.1.2'], [via('100.90.1.2', 'tailscale0', '100.101.102.103')]),
      {
        outcome: 'picked',
        interface: 'tailscale0',
        address: '100.101.102.103',
        reason: 'route to 100.90.1.2 leaves via tailscale0',
      },
    ],
    [
      'the tailnet route leaves via a tunnel the user excluded',
      'tailscale-host',
      {
        ...toMaster(
          'ws-lab-1',
          ['100.90.1.2'],
          [via('100.90.1.2', 'tailscale0', '100.101.102.103')],
        ),
        excludes: buildExcludes(['tailscale'], false),
      },
      {
        outcome: 'fatal',
        reason:
          'route to 100.90.1.2 leaves via tailscale0, which is excluded (prefix tailscale); name the interface to use with --iface, or change --exclude',
      },
    ],
    [
      'a route through a port whose cable is out',
      'bond-host',
      toMaster('trn-node-01', ['198.18.12.1'], [via('198.18.12.1', 'ens2f0', '198.18.12.42')]),
      {
        outcome: 'fatal',
        reason:
          'route to 198.18.12.1 leaves via ens2f0, which is down (no carrier); name the interface to use with --iface, or change --exclude',
      },
    ],
    [
      'a route through an interface the facts lack',
      'docker-host',
      toMaster('node-1', ['198.19.0.1'], [via('198.19.0.1', 'wg0', null)]),
      {
        outcome: 'skipped',
        reason: "route to 198.19.0.1 leaves via wg0, which is not among this host's interfaces",
      },
    ],
    [
      "a local route: the owner of the master's address",
      'master-node',
      toMaster('node-0', ['198.18.60.10'], [local('198.18.60.10')]),
      {
        outcome: 'picked',
        interface: 'ens3f0',
        address: '198.18.60.10',
        reason: "198.18.60.10 is this host's own address, on ens3f0",
      },
    ],
    [
      // 127.0.1.1 is not on lo, but lo's 127.0.0.0/8 local route covers it.
      'a local route to the 127.0.1.1 hostname',
      'hostname-loopback',
      toMaster('gpu-box', ['127.0.1.1'], [local('127.0.1.1')]),
      {
        outcome: 'skipped',
        reason: "127.0.1.1 is this host's own address, on lo, which is loopback",
      },
    ],
    [
      'the first answer of the family, not the first answer',
      'master-node',
      toMaster(
        'node-1',
        ['2001:db8:60::11', '198.19.0.11'],
        [
          via('2001:db8:60::11', 'ens3f0', '2001:db8:60::10'),
          via('198.19.0.11', 'eno1', '203.0.113.10', '203.0.113.1'),
        ],
      ),
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '203.0.113.10',
        reason: 'route to 198.19.0.11 leaves via eno1 (gateway 203.0.113.1)',
      },
    ],
    [
      'a Multus pod reaches a master on another node through the pod network',
      'multus-pod',
      toMaster(
        'pytorchjob-llm-master-0',
        ['10.244.1.5'],
        [via('10.244.1.5', 'eth0', '10.244.5.17', '10.244.5.1')],
      ),
      {
        outcome: 'picked',
        interface: 'eth0',
        address: '10.244.5.17',
        reason: 'route to 10.244.1.5 leaves via eth0 (gateway 10.244.5.1)',
      },
    ],
    [
      'IPv6 through a link-local gateway',
      'ipv6-only',
      {
        ...toMaster(
          'v6-node-9',
          ['2001:db8:0:99::9'],
          [via('2001:db8:0:99::9', 'ens3', '2001:db8:0:12::3', 'fe80::1')],
        ),
        family: 'ipv6',
      },
      {
        outcome: 'picked',
        interface: 'ens3',
        address: '2001:db8:0:12::3',
        reason: 'route to 2001:db8:0:99::9 leaves via ens3 (gateway fe80::1)',
      },
    ],
  ])('%s', (_, fixture, context, outcome) => {
    expect(route(loadFacts(fixture), makeContext(context))).toEqual(outcome);
  });

  it("prefers the kernel's source address when the interface holds several", () => {
    const facts = loadFacts('master-node');
    const extra = {
      address: '198.18.61.10',
      family: 'ipv4' as const,
      prefixLength: 24,
      scope: 'global' as const,
    };
    const two = {
      ...facts,
      interfaces: facts.interfaces.map((i) =>
        i.name === 'ens3f0' ? { ...i, addresses: [...i.addresses, extra] } : i,
      ),
    };
    const context = makeContext(
      toMaster('node-5', ['198.18.61.5'], [via('198.18.61.5', 'ens3f0', '198.18.61.10')]),
    );
    expect(route(two, context)).toMatchObject({
      outcome: 'picked',
      interface: 'ens3f0',
      address: '198.18.61.10',
    });
  });
});
