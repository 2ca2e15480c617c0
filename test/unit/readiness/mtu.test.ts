/**
 * The MTU check: a node's own MTU passes; nodes that disagree (compared by
 * the mesh, from the roster) are a warning naming them.
 */
import { describe, expect, it } from 'vitest';
import { compareMtus } from '../../../src/readiness/mtu.js';
import { findingOf, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

const network = () =>
  jobNeeds({
    network: { interface: 'ens3f0', family: 'ipv4', otherInterfaces: [], routesBack: [] },
  });

describe('mtu', () => {
  it('passes a node alone, saying --verify peers compares them', () => {
    expect(findingOf('mtu', network(), nodeFacts())).toMatchObject({
      level: 'ok',
      evidence: 'ens3f0 has MTU 9000 (compared across nodes by --verify peers)',
    });
  });

  it('passes nodes that agree', () => {
    const peers = [
      { node: 'node02', mtu: 9000 },
      { node: 'node03', mtu: 9000 },
    ];
    expect(compareMtus('ens3f0', 9000, peers).evidence).toBe(
      'ens3f0 has MTU 9000, as on the 2 other nodes',
    );
  });

  it('warns of nodes that disagree, naming each and the smaller MTU', () => {
    const finding = compareMtus('ens3f0', 9000, [
      { node: 'node02', mtu: 9000 },
      { node: 'node03', mtu: 1500 },
    ]);
    expect(finding).toMatchObject({
      level: 'warning',
      evidence:
        "ens3f0 has MTU 9000, but node03 has 1500: frames above 1500 may be dropped on the way (a switch at the smaller MTU), which stalls NCCL's large transfers while the rendezvous passes",
    });
    expect(finding.fix).toMatch(/ip link set dev ens3f0 mtu 1500.*ping -M do -s 1472 PEER$/);
  });

  it('names eight nodes that disagree, then counts the rest', () => {
    const peers = Array.from({ length: 11 }, (_, i) => ({ node: `node${i}`, mtu: 1500 }));
    expect(compareMtus('ens3f0', 9000, peers).evidence).toMatch(
      /but node0 has 1500, .*node7 has 1500 and 3 more: frames above 1500/,
    );
  });

  it('passes what it cannot read, saying so', () => {
    const node = nodeFacts({
      network: { interface: 'ib0', mtu: null, vendor: null, rpFilter: { all: 0, interface: 0 } },
    });
    expect(findingOf('mtu', network(), node).evidence).toBe(
      'the MTU of ib0 could not be read (/sys/class/net/ib0/mtu)',
    );
    expect(
      findingOf('mtu', jobNeeds({ network: null }), nodeFacts({ network: null })).evidence,
    ).toBe('no interface was chosen');
  });
});
