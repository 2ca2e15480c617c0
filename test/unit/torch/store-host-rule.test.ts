import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import type { HostFacts, InterfaceFacts } from '../../../src/host/host-facts.js';
import type { JobShape } from '../../../src/job/job-shape.js';
import { c10dStoreHostWarning, storeHostQuestion } from '../../../src/job/store-role.js';
import { TORCH_1_13, TORCH_2_6, TORCH_2_14 } from '../../../src/torch/releases.js';
import {
  hostsStore,
  type MachineNames,
  machineNames,
  matchesMachineHostname,
  type StoreHostMatch,
} from '../../../src/torch/store-host-rule.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';

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

// `localhost` resolves through /etc/hosts alone: no DNS query leaves the machine.
const iface = (name: string, address: string, kind: InterfaceFacts['kind']): InterfaceFacts => ({
  name,
  operstate: kind === 'loopback' ? 'unknown' : 'up',
  carrier: true,
  addresses: [{ address, family: 'ipv4', prefixLength: 8, scope: 'global' }],
  speedMbps: null,
  mtu: 1500,
  kind,
  master: null,
  rdma: null,
});
const facts: HostFacts = {
  hostname: 'localhost',
  routes: [],
  interfaces: [iface('lo', '127.0.0.1', 'loopback'), iface('ens3f0', '198.18.10.1', 'physical')],
};

function c10d(host: string, isHost: boolean | null = null): JobShape {
  return makeJob({
    rdzvBackend: 'c10d',
    master: { host, port: 29400, ...endpointOrigins('--rdzv-endpoint') },
    masterAddr: null,
    nnodes: { min: 2, max: 2, origin: originNamed('--nnodes') },
    nodeRank: null,
    isHost,
  });
}

/** The warning with what plan/plan.ts looks up for it: this host's names, as getaddrinfo gives them. */
async function warning(
  job: JobShape,
  facts: HostFacts,
  addresses: string[],
  torch: string | null = null,
) {
  const question = storeHostQuestion(job, facts, addresses);
  if (question === null) return c10dStoreHostWarning(job, facts, addresses, null, torch);
  const own = await lookup(facts.hostname, { all: true, verbatim: true });
  const machine = await machineNames(
    question.endpoint,
    facts.hostname,
    own.map((entry) => entry.address),
  );
  return c10dStoreHostWarning(job, facts, addresses, machine, torch);
}

describe('c10dStoreHostWarning (an endpoint of this node that torch will not host)', () => {
  it('warns for this node’s address given as a literal, and names the fix', async () => {
    expect(await warning(c10d('198.18.10.1'), facts, ['198.18.10.1'])).toMatch(
      /^the c10d endpoint 198\.18\.10\.1 is this node's address, but torchrun hosts the store only at localhost, the hostname localhost, its canonical name, an address it resolves to \((127\.0\.0\.1|::1)[^)]*\) or, in torch 2\.x, a name resolving to one of those: no node would host it .*; add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it('warns for a name that resolves to this node’s address', async () => {
    expect(await warning(c10d('trainer-0-data'), facts, ['198.18.10.1'])).toMatch(
      /^the c10d endpoint trainer-0-data resolves to this node's address 198\.18\.10\.1, but torchrun hosts the store only .*; add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it('warns about torch 1.13 for a name that only 2.x matches by address', async () => {
    expect(await warning(c10d('trainer-0'), facts, ['127.0.0.1'])).toBe(
      "the c10d endpoint trainer-0 resolves to this node's address 127.0.0.1, one its hostname localhost resolves to: torch 2.x hosts the store here, but torch 1.13 compares a name only with the hostname and its canonical name, so under 1.13 no node would host it and the rendezvous would wait until it times out; add --rdzv-conf is_host=1 on this node",
    );
  });

  it('warns only for the torch that will run', async () => {
    // A name that only 2.x's rule matches (by its addresses).
    expect(await warning(c10d('trainer-0'), facts, ['127.0.0.1'], '2.14.1+debian')).toBeNull();
    expect(await warning(c10d('trainer-0'), facts, ['127.0.0.1'], '1.13.0a0')).toBe(
      "the c10d endpoint trainer-0 resolves to this node's address 127.0.0.1, one its hostname localhost resolves to, but torch 1.13.0a0 compares a name only with the hostname and its canonical name (torch 2.x would host the store here), so no node would host it and the rendezvous would wait until it times out; add --rdzv-conf is_host=1 on this node",
    );
    // One no torch hosts: the rule named is the one that runs.
    expect(await warning(c10d('198.18.10.1'), facts, ['198.18.10.1'], '2.6.0+debian')).toMatch(
      /, but torch 2\.6\.0\+debian's torchrun hosts the store only at localhost, .*\) or a name resolving to one of those: no node/,
    );
    expect(await warning(c10d('198.18.10.1'), facts, ['198.18.10.1'], '1.13.0a0')).toMatch(
      /, but torch 1\.13\.0a0's torchrun hosts the store only at localhost, .* an address it resolves to \([^)]*\): no node/,
    );
  });

  it.each<[string, JobShape, string[]]>([
    ['is_host is given', c10d('198.18.10.1', true), ['198.18.10.1']],
    ['is_host=0 is given', c10d('198.18.10.1', false), ['198.18.10.1']],
    ['the endpoint is another node', c10d('198.18.10.2'), ['198.18.10.2']],
    ['the endpoint is a name for another node', c10d('trainer-1'), ['198.18.10.2']],
    ['the endpoint is loopback', c10d('127.0.0.1'), ['127.0.0.1']],
    ['the endpoint is the hostname', c10d('localhost'), ['127.0.0.1']],
    ['the backend is static', { ...c10d('198.18.10.1'), rdzvBackend: 'static' }, ['198.18.10.1']],
  ])('says nothing when %s', async (_why, job, addresses) => {
    expect(await warning(job, facts, addresses)).toBeNull();
  });
});
