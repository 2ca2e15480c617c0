import { describe, expect, it } from 'vitest';
import type { ResolveContext, StrategyOutcome } from '../../../../src/resolve/decision.js';
import { buildExcludes } from '../../../../src/resolve/excludes.js';
import { subnet } from '../../../../src/resolve/strategies/subnet.js';
import {
  type FixtureName,
  loadFacts,
  makeContext,
} from '../../../fixtures/facts/facts-fixtures.js';

const master = (host: string, ...addresses: string[]) => ({ master: { host, addresses } });

describe('subnet', () => {
  it.each<[string, FixtureName, Partial<ResolveContext>, StrategyOutcome]>([
    ['no master', 'docker-host', {}, { outcome: 'skipped', reason: 'no master address known' }],
    [
      'the fabric network',
      'infiniband-node',
      master('dgx-a100-001', '198.18.32.1'),
      {
        outcome: 'picked',
        interface: 'ib0',
        address: '198.18.32.17',
        reason: '198.18.32.0/20 on ib0 contains master 198.18.32.1',
      },
    ],
    [
      // The rendezvous is on management; subnet follows the master, speed is a warning elsewhere.
      'the management network when the master is there',
      'infiniband-node',
      master('dgx-a100-001', '203.0.113.5'),
      {
        outcome: 'picked',
        interface: 'eth0',
        address: '203.0.113.17',
        reason: '203.0.113.0/24 on eth0 contains master 203.0.113.5',
      },
    ],
    [
      "the master is this host's own address",
      'master-node',
      master('node-0', '198.18.60.10'),
      {
        outcome: 'picked',
        interface: 'ens3f0',
        address: '198.18.60.10',
        reason: "master 198.18.60.10 is this host's own address, on ens3f0",
      },
    ],
    [
      'own IPv6 address in another spelling',
      'master-node',
      { ...master('node-0', '2001:db8:60:0::10'), family: 'ipv6' },
      {
        outcome: 'picked',
        interface: 'ens3f0',
        address: '2001:db8:60::10',
        reason: "master 2001:db8:60:0::10 is this host's own address, on ens3f0",
      },
    ],
    [
      'a name on two networks: the faster interface',
      'master-node',
      master('node-1', '203.0.113.11', '198.18.60.11'),
      {
        outcome: 'picked',
        interface: 'ens3f0',
        address: '198.18.60.10',
        reason:
          '198.18.60.0/24 on ens3f0 contains master 198.18.60.11 (best by speed of ens3f0, eno1)',
      },
    ],
    [
      'the bond, not its members',
      'bond-host',
      master('trn-node-01', '198.18.8.1'),
      {
        outcome: 'picked',
        interface: 'bond0',
        address: '198.18.8.42',
        reason: '198.18.8.0/22 on bond0 contains master 198.18.8.1',
      },
    ],
    [
      'a stale address on a down port',
      'bond-host',
      master('trn-node-01', '198.18.12.1'),
      {
        outcome: 'fatal',
        reason:
          '198.18.12.0/22 on ens2f0 contains master 198.18.12.1, but ens2f0 is down (no carrier); name the interface to use with --iface, or change --exclude',
      },
    ],
    [
      'an excluded exact name',
      'bond-host',
      { ...master('trn-node-01', '198.18.8.1'), excludes: buildExcludes(['=bond0'], false) },
      {
        outcome: 'fatal',
        reason:
          '198.18.8.0/22 on bond0 contains master 198.18.8.1, but bond0 is excluded (=bond0); name the interface to use with --iface, or change --exclude',
      },
    ],
    [
      'a master in a container on docker0',
      'docker-host',
      master('trainer', '172.17.0.2'),
      {
        outcome: 'fatal',
        reason:
          '172.17.0.0/16 on docker0 contains master 172.17.0.2, but docker0 is excluded (prefix docker); name the interface to use with --iface, or change --exclude',
      },
    ],
    [
      "the master is this host's docker0 address",
      'docker-host',
      master('gpu-dev-01', '172.17.0.1'),
      {
        outcome: 'fatal',
        reason:
          "master 172.17.0.1 is this host's own address, on docker0, which is excluded (prefix docker); name the interface to use with --iface, or change --exclude",
      },
    ],
    [
      'a hostname on 127.0.1.1',
      'hostname-loopback',
      master('gpu-box', '127.0.1.1'),
      {
        outcome: 'skipped',
        reason: 'master 127.0.1.1 is a loopback address, which other nodes cannot reach',
      },
    ],
    [
      'a master on the tailnet',
      'tailscale-host',
      master('ws-lab-1', '100.90.1.2'),
      { outcome: 'skipped', reason: "no usable interface's prefix contains master 100.90.1.2" },
    ],
    [
      'the pod network of a Multus pod',
      'multus-pod',
      master('pytorchjob-llm-master-0', '10.244.5.9'),
      {
        outcome: 'picked',
        interface: 'eth0',
        address: '10.244.5.17',
        reason: '10.244.5.0/24 on eth0 contains master 10.244.5.9',
      },
    ],
    [
      'IPv6',
      'ipv6-only',
      { ...master('v6-node-1', '2001:db8:0:12::1'), family: 'ipv6' },
      {
        outcome: 'picked',
        interface: 'ens3',
        address: '2001:db8:0:12::3',
        reason: '2001:db8:0:12::/64 on ens3 contains master 2001:db8:0:12::1',
      },
    ],
    [
      'a master without an address of the family',
      'ipv6-only',
      { ...master('v6-node-1', '198.18.0.1'), family: 'ipv6' },
      {
        outcome: 'skipped',
        reason: 'master v6-node-1 has no IPv6 address (it resolves to 198.18.0.1)',
      },
    ],
    [
      'only the addresses of the family count',
      'master-node',
      master('node-1', '2001:db8:60::11', '203.0.113.11'),
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '203.0.113.10',
        reason: '203.0.113.0/24 on eno1 contains master 203.0.113.11',
      },
    ],
    [
      'the Kubernetes node network among 500 veth',
      'k8s-node',
      master('k8s-gpu-worker-0', '198.18.20.10'),
      {
        outcome: 'picked',
        interface: 'ens5',
        address: '198.18.20.13',
        reason: '198.18.20.0/24 on ens5 contains master 198.18.20.10',
      },
    ],
  ])('%s', (_, fixture, context, outcome) => {
    expect(subnet(loadFacts(fixture), makeContext(context))).toEqual(outcome);
  });
});
