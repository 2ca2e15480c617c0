/**
 * SPEC "Causes users meet": a container on a bridge network in a multi-node
 * job whose master is elsewhere (src/env/bridge-container.ts), over the
 * docker-bridge-container snapshot (eth0 172.17.0.2/16, default via 172.17.0.1).
 */
import { describe, expect, it } from 'vitest';
import { bridgeContainerWarning } from '../../../src/env/bridge-container.js';
import type { Decision, ResolveContext } from '../../../src/resolve/decision.js';
import { loadFacts, makeContext } from '../../fixtures/facts/facts-fixtures.js';

const facts = loadFacts('docker-bridge-container');
const decision: Decision = {
  interface: 'eth0',
  address: '172.17.0.2',
  family: 'ipv4',
  strategy: 'route',
  reason: '',
  trace: [],
};
const withMaster = (address: string, more: Partial<ResolveContext> = {}) =>
  makeContext({ master: { host: 'master', addresses: [address] }, ...more });

describe('bridgeContainerWarning', () => {
  it('a remote master: names the bridge network, its gateway and --network host', () => {
    expect(bridgeContainerWarning(facts, decision, withMaster('198.18.20.5'))).toBe(
      "this node is a docker container on the bridge network 172.17.0.0/16 (Docker's default bridge): eth0 172.17.0.2 reaches the master 198.18.20.5 only through the bridge's gateway 172.17.0.1, behind NAT, so no other node can dial this node's NCCL and Gloo ports; run the container with --network host (or on a macvlan network of the nodes' own)",
    );
  });

  it.each<[string, Parameters<typeof bridgeContainerWarning>]>([
    ['the master on the bridge network', [facts, decision, withMaster('172.17.0.3')]],
    ['a single-node job', [facts, decision, withMaster('198.18.20.5', { singleNode: true })]],
    [
      'a host, not a container',
      [{ ...facts, container: null }, decision, withMaster('198.18.20.5')],
    ],
    [
      'an older snapshot (unknown)',
      [{ ...facts, container: undefined }, decision, withMaster('198.18.20.5')],
    ],
  ])('nothing for %s', (_, args) => {
    expect(bridgeContainerWarning(...args)).toBeNull();
  });
});
