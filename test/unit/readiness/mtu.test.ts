/** The MTU check: a node's own MTU passes; nodes that disagree are a warning naming them. */
import { describe, expect, it } from 'vitest';
import { findingOf, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

const network = (peerMtus: { node: string; mtu: number }[]) =>
  jobNeeds({
    network: { interface: 'ens3f0', family: 'ipv4', otherInterfaces: [], routesBack: [], peerMtus },
  });

describe('mtu', () => {
  it('passes a node alone, saying --verify peers compares them', () => {
    expect(findingOf('mtu', network([]), nodeFacts())).toMatchObject({
      level: 'ok',
      evidence: 'ens3f0 has MTU 9000 (compared across nodes by --verify peers)',
    });
  });

  it('passes nodes that agree', () => {
    const peers = [
      { node: 'node02', mtu: 9000 },
      { node: 'node03', mtu: 9000 },
    ];
    expect(findingOf('mtu', network(peers), nodeFacts()).evidence).toBe(
      'ens3f0 has MTU 9000, as on the 2 other nodes',
    );
  });

  it('warns of nodes that disagree, naming each and the smaller MTU', () => {
    const finding = findingOf(
      'mtu',
      network([
        { node: 'node02', mtu: 9000 },
        { node: 'node03', mtu: 1500 },
      ]),
      nodeFacts(),
    );
    expect(finding).toMatchObject({
      level: 'warning',
      evidence:
        "ens3f0 has MTU 9000, but node03 has 1500: frames above 1500 may be dropped on the way (a switch at the smaller MTU), which stalls NCCL's large transfers while the rendezvous passes",
    });
    expect(finding.fix).toMatch(/ip link set dev ens3f0 mtu 1500.*ping -M do -s 1472 PEER$/);
  });

  it('passes what it cannot read, saying so', () => {
    const node = nodeFacts({
      network: { interface: 'ib0', mtu: null, vendor: null, rpFilter: { all: 0, interface: 0 } },
    });
    expect(findingOf('mtu', network([]), node).evidence).toBe(
      'the MTU of ib0 could not be read (/sys/class/net/ib0/mtu)',
    );
    expect(
      findingOf('mtu', jobNeeds({ network: null }), nodeFacts({ network: null })).evidence,
    ).toBe('no interface was chosen');
  });
});
