import { describe, expect, it } from 'vitest';
import type {
  AttachedNetwork,
  NetworkStatus,
} from '../../../../src/cluster/multus-network-status.js';
import { buildExcludes } from '../../../../src/resolve/excludes.js';
import { multus } from '../../../../src/resolve/strategies/multus.js';
import { loadFacts, makeContext } from '../../../fixtures/facts/facts-fixtures.js';

const FILE = '/etc/podinfo/annotations';
const POD: AttachedNetwork = {
  name: 'k8s-pod-network',
  interface: 'eth0',
  ips: ['10.244.5.17'],
  default: true,
};
const ROCE: AttachedNetwork = {
  name: 'default/roce',
  interface: 'net1',
  ips: ['198.18.40.17'],
  default: false,
};
const attached = (...networks: AttachedNetwork[]): NetworkStatus => ({
  file: FILE,
  kind: 'attached',
  networks,
});
/** The multus-pod fixture: eth0 the pod network (veth, 10G), net1 a RoCE VF (100G). */
const pod = loadFacts('multus-pod');

describe('multus', () => {
  it('picks the secondary network Multus attached, naming it and the pod network it passes over', () => {
    expect(multus(pod, makeContext({ networkStatus: attached(POD, ROCE) }))).toEqual({
      outcome: 'picked',
      interface: 'net1',
      address: '198.18.40.17',
      reason:
        'Multus attached net1 (default/roce, 198.18.40.17) as a secondary network: the data network, not the pod network eth0',
    });
  });

  it('takes the first usable secondary network in the order the pod lists them, saying why the earlier ones were passed', () => {
    const gone = { ...ROCE, name: 'default/gone', interface: 'net2' };
    expect(multus(pod, makeContext({ networkStatus: attached(POD, gone, ROCE) }))).toMatchObject({
      outcome: 'picked',
      interface: 'net1',
      reason: expect.stringMatching(
        /; before it: net2 \(default\/gone, 198\.18\.40\.17\): no such interface in this pod$/,
      ),
    });
  });

  it('applies the excludes: an excluded secondary network is passed, with the rule', () => {
    const outcome = multus(
      pod,
      makeContext({
        networkStatus: attached(POD, ROCE),
        excludes: buildExcludes(['=net1'], false),
      }),
    );
    expect(outcome).toEqual({
      outcome: 'skipped',
      reason:
        'no secondary network Multus attached is usable here (net1 (default/roce, 198.18.40.17): excluded (=net1))',
    });
  });

  it('skips when Multus attached only the pod network', () => {
    expect(multus(pod, makeContext({ networkStatus: attached(POD) }))).toEqual({
      outcome: 'skipped',
      reason: 'Multus attached only the pod network (eth0 (k8s-pod-network, 10.244.5.17))',
    });
  });

  it('skips without a file, when the pod asks for no networks, and when their status never came', () => {
    expect(multus(pod, makeContext())).toEqual({
      outcome: 'skipped',
      reason: 'no --network-status file',
    });
    expect(
      multus(pod, makeContext({ networkStatus: { file: FILE, kind: 'none requested' } })),
    ).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/asks for no Multus/) });
    expect(
      multus(
        pod,
        makeContext({
          networkStatus: { file: FILE, kind: 'not written', request: 'roce', waitedMs: 60_000 },
        }),
      ),
    ).toEqual({
      outcome: 'skipped',
      reason: `${FILE} still had no k8s.v1.cni.cncf.io/network-status after 60 s (the pod asks for roce): is Multus running, and is the file the downward API's metadata.annotations?`,
    });
  });

  it('binds the address Multus reported where the interface holds several', () => {
    const facts = structuredClone(pod);
    const net1 = facts.interfaces.find((i) => i.name === 'net1');
    net1?.addresses.unshift({
      address: '198.18.41.9',
      prefixLength: 24,
      family: 'ipv4',
      scope: 'global',
    });
    expect(multus(facts, makeContext({ networkStatus: attached(POD, ROCE) }))).toMatchObject({
      interface: 'net1',
      address: '198.18.40.17',
    });
  });
});
