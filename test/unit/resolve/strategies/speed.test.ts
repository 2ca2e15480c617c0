import { describe, expect, it } from 'vitest';
import type { InterfaceFacts } from '../../../../src/host/host-facts.js';
import type { ResolveContext, StrategyOutcome } from '../../../../src/resolve/decision.js';
import { buildExcludes } from '../../../../src/resolve/excludes.js';
import { rankBySpeed } from '../../../../src/resolve/speed-ranking.js';
import { speed } from '../../../../src/resolve/strategies/speed.js';
import {
  type FixtureName,
  loadFacts,
  makeContext,
} from '../../../fixtures/facts/facts-fixtures.js';

describe('speed', () => {
  it.each<[string, FixtureName, Partial<ResolveContext>, StrategyOutcome]>([
    [
      'IPoIB with its RDMA device over the management port',
      'infiniband-node',
      {},
      {
        outcome: 'picked',
        interface: 'ib0',
        address: '198.18.32.17',
        reason:
          'fastest usable: ib0 (RDMA mlx5_0, 200000 Mb/s, infiniband); best of 2 usable (next: eth0, 1000 Mb/s, physical)',
      },
    ],
    [
      'the RoCE VF of a Multus pod',
      'multus-pod',
      {},
      {
        outcome: 'picked',
        interface: 'net1',
        address: '198.18.40.17',
        reason:
          'fastest usable: net1 (RDMA mlx5_3, 100000 Mb/s, physical); best of 2 usable (next: eth0, 10000 Mb/s, veth)',
      },
    ],
    [
      'the bond over its VLAN at the same speed: physical before virtual',
      'bond-host',
      {},
      {
        outcome: 'picked',
        interface: 'bond0',
        address: '198.18.8.42',
        reason:
          'fastest usable: bond0 (50000 Mb/s, bond); best of 3 usable (next: bond0.2973, 50000 Mb/s, vlan)',
      },
    ],
    [
      'the only port left after the Docker bridges are excluded',
      'docker-host',
      {},
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '198.18.4.21',
        reason: 'fastest usable: eno1 (10000 Mb/s, physical); the only usable one',
      },
    ],
    [
      'without default excludes the bridges are usable but slower',
      'docker-host',
      { excludes: buildExcludes([], true) },
      {
        outcome: 'picked',
        interface: 'eno1',
        address: '198.18.4.21',
        reason:
          'fastest usable: eno1 (10000 Mb/s, physical); best of 3 usable (next: br-3f9a1c2e7b44, speed unknown, bridge)',
      },
    ],
    [
      'the node port among 500 veth',
      'k8s-node',
      {},
      {
        outcome: 'picked',
        interface: 'ens5',
        address: '198.18.20.13',
        reason: 'fastest usable: ens5 (25000 Mb/s, physical); the only usable one',
      },
    ],
    [
      'an excluded fabric leaves management',
      'infiniband-node',
      { excludes: buildExcludes(['=ib0'], false) },
      {
        outcome: 'picked',
        interface: 'eth0',
        address: '203.0.113.17',
        reason: 'fastest usable: eth0 (1000 Mb/s, physical); the only usable one',
      },
    ],
    [
      'IPv6',
      'ipv6-only',
      { family: 'ipv6' },
      {
        outcome: 'picked',
        interface: 'ens3',
        address: '2001:db8:0:12::3',
        reason: 'fastest usable: ens3 (25000 Mb/s, physical); the only usable one',
      },
    ],
    [
      'no IPv4 anywhere',
      'ipv6-only',
      {},
      { outcome: 'skipped', reason: 'no usable IPv4 interface (1 loopback, 1 no IPv4 address)' },
    ],
    [
      'link-local addresses only',
      'link-local-only',
      {},
      {
        outcome: 'skipped',
        reason: 'no usable IPv4 interface (1 loopback, 1 link-local only, 1 no IPv4 address)',
      },
    ],
    [
      'a Kubernetes node whose port is excluded',
      'k8s-node',
      { excludes: buildExcludes(['ens'], false) },
      {
        outcome: 'skipped',
        reason:
          'no usable IPv4 interface (500 excluded (prefix veth), 1 loopback, 1 excluded (prefix ens), 1 excluded (prefix kube-ipvs), 1 excluded (prefix nodelocaldns), 1 excluded (prefix flannel), 1 excluded (prefix cni))',
      },
    ],
  ])('%s', (_, fixture, context, outcome) => {
    expect(speed(loadFacts(fixture), makeContext(context))).toEqual(outcome);
  });
});

describe('rankBySpeed', () => {
  const port = (name: string, fields: Partial<InterfaceFacts>): InterfaceFacts => ({
    name,
    operstate: 'up',
    carrier: true,
    addresses: [],
    speedMbps: null,
    mtu: 1500,
    kind: 'physical',
    master: null,
    rdma: null,
    ...fields,
  });
  const rdma = { device: 'mlx5_0', port: 1, state: 'ACTIVE' };

  it.each<[string, InterfaceFacts[], string[]]>([
    [
      'RDMA first, even when slower',
      [port('eth0', { speedMbps: 100000 }), port('ib0', { speedMbps: 56000, rdma })],
      ['ib0', 'eth0'],
    ],
    [
      'faster first',
      [port('eth0', { speedMbps: 1000 }), port('eth1', { speedMbps: 25000 })],
      ['eth1', 'eth0'],
    ],
    ['unknown speed last', [port('eth0', {}), port('eth1', { speedMbps: 10 })], ['eth1', 'eth0']],
    [
      'physical before virtual at equal speed',
      [port('veth0', { speedMbps: 10000, kind: 'veth' }), port('eth9', { speedMbps: 10000 })],
      ['eth9', 'veth0'],
    ],
    [
      'bond and infiniband count as hardware',
      [port('vlan5', { kind: 'vlan' }), port('bond0', { kind: 'bond' })],
      ['bond0', 'vlan5'],
    ],
    [
      'then name, numbers in numeric order',
      [port('eth10', {}), port('eth2', {}), port('eth1', {})],
      ['eth1', 'eth2', 'eth10'],
    ],
  ])('%s', (_, interfaces, order) => {
    expect(rankBySpeed(interfaces).map((i) => i.name)).toEqual(order);
  });
});
