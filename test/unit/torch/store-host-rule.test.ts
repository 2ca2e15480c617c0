import { describe, expect, it } from 'vitest';
import { TORCH_1_13, TORCH_2_6, TORCH_2_14 } from '../../../src/torch/releases.js';
import {
  hostsStore,
  type MachineNames,
  matchesMachineHostname,
  type StoreHostMatch,
} from '../../../src/torch/store-host-rule.js';

/** What each release's torchrun decides from the match (2.6 and 2.14 share the rule). */
function underEach(match: StoreHostMatch) {
  expect(hostsStore(match, TORCH_2_14)).toBe(hostsStore(match, TORCH_2_6));
  return { torch113: hostsStore(match, TORCH_1_13), torch2: hostsStore(match, TORCH_2_6) };
}

describe('matchesMachineHostname: torch 1.13 and 2.x (rendezvous/utils.py)', () => {
  // nodeA's hostname resolves to its management address, Debian style.
  const machine: MachineNames = {
    hostname: 'nodeA',
    addresses: ['203.0.113.1', '2001:db8:113::1'],
    canonicalName: 'nodeA.cluster.example',
  };
  it.each<[string, string, string[], { torch113: boolean; torch2: boolean }]>([
    ['localhost', 'localhost', ['127.0.0.1'], { torch113: true, torch2: true }],
    ['a loopback literal', '127.0.0.5', ['127.0.0.5'], { torch113: true, torch2: true }],
    ['the IPv6 loopback', '::1', ['::1'], { torch113: true, torch2: true }],
    ['the hostname', 'nodeA', ['203.0.113.1'], { torch113: true, torch2: true }],
    [
      'the canonical name',
      'nodeA.cluster.example',
      ['203.0.113.1'],
      { torch113: true, torch2: true },
    ],
    [
      'an address the hostname resolves to',
      '203.0.113.1',
      ['203.0.113.1'],
      { torch113: true, torch2: true },
    ],
    [
      'the same IPv6 address spelled otherwise',
      '2001:DB8:113:0::1',
      ['2001:DB8:113:0::1'],
      { torch113: true, torch2: true },
    ],
    [
      "another of this node's addresses (the data network)",
      '198.18.10.1',
      ['198.18.10.1'],
      { torch113: false, torch2: false },
    ],
    [
      "a name for the hostname's address (2.x compares addresses)",
      'master-mgmt',
      ['203.0.113.1'],
      { torch113: false, torch2: true },
    ],
    [
      'a name for the data address',
      'trainer-0-data',
      ['198.18.10.1'],
      { torch113: false, torch2: false },
    ],
    ['another node', 'nodeB', ['203.0.113.2'], { torch113: false, torch2: false }],
  ])('%s', (_case, endpoint, endpointAddresses, expected) => {
    expect(underEach(matchesMachineHostname(endpoint, endpointAddresses, machine))).toEqual(
      expected,
    );
  });

  it('2.x also hosts on a worker whose hostname and the endpoint both resolve to 127.0.1.1', () => {
    const worker = { hostname: 'node02', addresses: ['127.0.1.1'], canonicalName: 'node02' };
    expect(underEach(matchesMachineHostname('node01', ['127.0.1.1'], worker))).toEqual({
      torch113: false,
      torch2: true,
    });
  });
});
