/**
 * SPEC `agree`: what the registry aggregates from every node's published
 * interfaces (commonNetworks) and how each node's strategy ranks that one
 * table: the same network everywhere, each node's own interface on it.
 */
import { describe, expect, it } from 'vitest';
import type { HostFacts, InterfaceFacts } from '../../../../src/host/host-facts.js';
import type { PublishedNetwork } from '../../../../src/probe/protocol.js';
import { commonNetworks } from '../../../../src/registry/common-networks.js';
import type { Agreement, NetworkTable } from '../../../../src/resolve/agreement.js';
import { agree } from '../../../../src/resolve/strategies/agree.js';
import { makeContext } from '../../../fixtures/facts/facts-fixtures.js';

function nic(
  name: string,
  cidr: string,
  speedMbps: number | null,
  rdma: string | null = null,
): InterfaceFacts {
  const [address = '', prefix = '24'] = cidr.split('/');
  return {
    name,
    operstate: 'up',
    carrier: true,
    addresses: [{ address, family: 'ipv4', prefixLength: Number(prefix), scope: 'global' }],
    speedMbps,
    mtu: 1500,
    kind: 'physical',
    master: null,
    rdma: rdma === null ? null : { device: rdma, port: 1, linkLayer: 'Ethernet', state: 'ACTIVE' },
  } as InterfaceFacts;
}

const host = (...interfaces: InterfaceFacts[]): HostFacts => ({
  hostname: 'node',
  interfaces,
  routes: [],
});

/** What a node publishes: each usable interface's address (peers/publish.ts does this from candidates). */
function publishedBy(facts: HostFacts): PublishedNetwork[] {
  return facts.interfaces.map((iface) => ({
    interface: iface.name,
    address: iface.addresses[0]?.address as string,
    prefixLength: iface.addresses[0]?.prefixLength as number,
    speedMbps: iface.speedMbps,
    rdma: iface.rdma?.device ?? null,
  }));
}

const agreed = (table: NetworkTable): Agreement => ({ kind: 'published', table });

/**
 * Three nodes: a management net every name resolves to (10 Gb/s), a data net
 * whose NIC is named differently on each (100 Gb/s), a docker0 with the same
 * address everywhere (faster still, by what sysfs says), and a net on two only.
 */
const NODES = [
  host(
    nic('eno1', '203.0.113.11/24', 10_000),
    nic('ens3f0', '198.18.20.1/24', 100_000),
    nic('docker0', '198.19.0.1/16', 400_000),
    nic('ib0', '198.18.50.1/24', 200_000, 'mlx5_0'),
  ),
  host(
    nic('eno1', '203.0.113.12/24', 10_000),
    nic('enp65s0', '198.18.20.2/24', 100_000),
    nic('docker0', '198.19.0.1/16', 400_000),
    nic('ib0', '198.18.50.2/24', 200_000, 'mlx5_0'),
  ),
  host(
    nic('eno1', '203.0.113.13/24', 10_000),
    nic('eth2', '198.18.20.3/24', 25_000),
    nic('docker0', '198.19.0.1/16', 400_000),
  ),
];

describe('commonNetworks', () => {
  it('keeps the networks all nodes have, their slowest speed, RDMA and shared addresses', () => {
    expect(commonNetworks(NODES.map(publishedBy))).toEqual({
      nodes: 3,
      common: [
        {
          network: '198.18.20.0',
          prefixLength: 24,
          slowestMbps: 25_000,
          rdma: false,
          duplicated: [],
        },
        {
          network: '198.19.0.0',
          prefixLength: 16,
          slowestMbps: 400_000,
          rdma: false,
          duplicated: ['198.19.0.1'],
        },
        {
          network: '203.0.113.0',
          prefixLength: 24,
          slowestMbps: 10_000,
          rdma: false,
          duplicated: [],
        },
      ],
      partial: [{ network: '198.18.50.0', prefixLength: 24, nodes: 2 }],
      partialMore: 0,
    });
  });

  it('takes a node with two interfaces on one network once, by its best', () => {
    const twice = [
      [
        ...publishedBy(NODES[0] as HostFacts),
        {
          ...publishedBy(NODES[0] as HostFacts)[1],
          interface: 'ens3f1',
          address: '198.18.20.9',
          speedMbps: 1_000,
        } as PublishedNetwork,
      ],
      publishedBy(NODES[1] as HostFacts),
    ];
    const data = commonNetworks(twice).common.find((network) => network.network === '198.18.20.0');
    expect(data).toMatchObject({ slowestMbps: 100_000, duplicated: [] });
  });

  it('says when a speed is unknown anywhere, and RDMA only when every node has it', () => {
    const table = commonNetworks([
      [
        {
          interface: 'ib0',
          address: '198.18.50.1',
          prefixLength: 24,
          speedMbps: 200_000,
          rdma: 'mlx5_0',
        },
      ],
      [
        {
          interface: 'ib0',
          address: '198.18.50.2',
          prefixLength: 24,
          speedMbps: null,
          rdma: 'mlx5_0',
        },
      ],
    ]);
    expect(table.common).toEqual([
      { network: '198.18.50.0', prefixLength: 24, slowestMbps: null, rdma: true, duplicated: [] },
    ]);
  });
});

describe('agree', () => {
  const table = commonNetworks(NODES.map(publishedBy));

  it('every node picks the same network, each its own interface on it, never the shared docker0', () => {
    const picks = NODES.map((facts) => agree(facts, makeContext({ agreement: agreed(table) })));
    expect(
      picks.map((pick) => pick.outcome === 'picked' && [pick.interface, pick.address]),
    ).toEqual([
      ['ens3f0', '198.18.20.1'],
      ['enp65s0', '198.18.20.2'],
      ['eth2', '198.18.20.3'],
    ]);
    expect(picks[0]?.reason).toBe(
      "198.18.20.0/24 is common to all 3 nodes and wins (its slowest node 25000 Mb/s, 203.0.113.0/24's 10000 Mb/s); ens3f0 holds 198.18.20.1 on it; common: 198.18.20.0/24 (slowest 25000 Mb/s), 203.0.113.0/24 (slowest 10000 Mb/s); 198.19.0.0/16 does not count: 198.19.0.1 is held by more than one node; only on some of the 3 nodes: 198.18.50.0/24 on 2",
    );
  });

  it('puts a network RDMA-backed on every node first, whatever the speeds', () => {
    const rdma = commonNetworks(NODES.slice(0, 2).map(publishedBy));
    const pick = agree(NODES[1] as HostFacts, makeContext({ agreement: agreed(rdma) }));
    expect(pick).toMatchObject({ outcome: 'picked', interface: 'ib0', address: '198.18.50.2' });
    expect(pick.reason).toMatch(
      /^198\.18\.50\.0\/24 is common to all 2 nodes and wins \(RDMA-backed on every node, 198\.18\.20\.0\/24 is not\)/,
    );
  });

  it('breaks a tie by the lower network address, the same on every node', () => {
    const tie = {
      nodes: 2,
      common: [
        {
          network: '203.0.113.0',
          prefixLength: 24,
          slowestMbps: 10_000,
          rdma: false,
          duplicated: [],
        },
        {
          network: '198.18.20.0',
          prefixLength: 24,
          slowestMbps: 10_000,
          rdma: false,
          duplicated: [],
        },
      ],
      partial: [],
      partialMore: 0,
    };
    const pick = agree(NODES[0] as HostFacts, makeContext({ agreement: agreed(tie) }));
    expect(pick).toMatchObject({ outcome: 'picked', interface: 'ens3f0' });
    expect(pick.reason).toContain(
      '(tied with 203.0.113.0/24 on 10000 Mb/s; the lower network address breaks the tie)',
    );
  });

  it('skips, saying why, when no network is common or no rendezvous ran', () => {
    const none = commonNetworks([
      [
        {
          interface: 'eth0',
          address: '198.18.1.1',
          prefixLength: 24,
          speedMbps: 1_000,
          rdma: null,
        },
      ],
      [
        {
          interface: 'eth0',
          address: '198.18.2.1',
          prefixLength: 24,
          speedMbps: 1_000,
          rdma: null,
        },
      ],
    ]);
    expect(agree(NODES[0] as HostFacts, makeContext({ agreement: agreed(none) }))).toEqual({
      outcome: 'skipped',
      reason:
        'no network is common to all 2 nodes; only on some of the 2 nodes: 198.18.1.0/24 on 1, 198.18.2.0/24 on 1',
    });
    expect(
      agree(
        NODES[0] as HostFacts,
        makeContext({
          agreement: { kind: 'unavailable', reason: 'a single-node job: nothing to agree with' },
        }),
      ),
    ).toEqual({ outcome: 'skipped', reason: 'a single-node job: nothing to agree with' });
    expect(agree(NODES[0] as HostFacts, makeContext())).toEqual({
      outcome: 'skipped',
      reason: 'no rendezvous ran',
    });
  });

  it('skips when this node has no candidate on the agreed network (the host changed since it published)', () => {
    const onlyDocker = {
      nodes: 2,
      common: [
        {
          network: '198.19.0.0',
          prefixLength: 16,
          slowestMbps: 1_000,
          rdma: false,
          duplicated: [],
        },
      ],
      partial: [],
      partialMore: 0,
    };
    expect(agree(NODES[0] as HostFacts, makeContext({ agreement: agreed(onlyDocker) }))).toEqual({
      outcome: 'skipped',
      reason:
        'the nodes agreed on 198.19.0.0/16, but this node no longer has a usable address on it',
    });
  });
});
