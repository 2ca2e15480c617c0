/**
 * This node's part in torch's store (src/job/store-role.ts): the role by
 * torch's own rule, and the warning for a c10d endpoint of this node that
 * the torch that will run would not host.
 */
import { lookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { UnresolvableMasterError } from '../../../src/errors.js';
import type { HostFacts, InterfaceFacts } from '../../../src/host/host-facts.js';
import type { JobShape } from '../../../src/job/job-shape.js';
import { c10dStoreHostWarning, storeHostQuestion, storeRole } from '../../../src/job/store-role.js';
import { machineNames } from '../../../src/torch/store-host-rule.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';
import { loFacts, masterJob } from '../../fixtures/loopback.js';

describe('storeRole: the store host by torch’s own rule', () => {
  const endpoint = (host: string) => ({ host, port: 29500, ...endpointOrigins('test') });
  const rank = (value: number) => ({ nodeRank: { value, origin: originNamed('test') } });
  // c10d asks getaddrinfo(hostname): `localhost` resolves through /etc/hosts alone.
  const local: HostFacts = { ...loFacts, hostname: 'localhost' };
  const c10d = (isHost: boolean | null = null): Partial<JobShape> => ({
    rdzvBackend: 'c10d',
    isHost,
  });

  it.each<[string, string, Partial<JobShape>, unknown]>([
    [
      'static rank 0 at its own address',
      '198.18.10.2',
      rank(0),
      { role: 'store host', address: '198.18.10.2', warning: null, clientIfTaken: null },
    ],
    [
      'static rank 0 at a loopback address',
      '127.0.0.5',
      rank(0),
      { role: 'store host', address: '127.0.0.5', warning: null, clientIfTaken: null },
    ],
    [
      'static rank 1 on the master’s own host (two ranks, one host)',
      '198.18.10.2',
      rank(1),
      { role: 'worker', address: '198.18.10.2' },
    ],
    [
      'static rank 1 whose /etc/hosts maps the master to 127.0.1.1',
      '127.0.1.1',
      rank(1),
      { role: 'worker', address: '127.0.1.1' },
    ],
    [
      'static rank 1, another host',
      '198.18.10.1',
      rank(1),
      { role: 'worker', address: '198.18.10.1' },
    ],
    [
      'c10d at localhost (inferred: a client if the port is taken)',
      '127.0.0.1',
      c10d(),
      { role: 'store host', address: '127.0.0.1', warning: null, clientIfTaken: '127.0.0.1' },
    ],
    [
      'c10d at its own data address, which torch does not recognise',
      '198.18.10.2',
      c10d(),
      { role: 'worker', address: '198.18.10.2' },
    ],
    [
      'c10d at its own data address with is_host=1',
      '198.18.10.2',
      c10d(true),
      { role: 'store host', address: '198.18.10.2', warning: null, clientIfTaken: null },
    ],
    [
      'c10d at localhost with is_host=0',
      '127.0.0.1',
      c10d(false),
      { role: 'worker', address: '127.0.0.1' },
    ],
    [
      'c10d at another host, even as rank 0',
      '198.18.10.1',
      { ...c10d(), ...rank(0) },
      { role: 'worker', address: '198.18.10.1' },
    ],
    [
      'etcd served on this host (a service of its own)',
      '198.18.10.2',
      { rdzvBackend: 'etcd' },
      { role: 'worker', address: '198.18.10.2' },
    ],
  ])('%s', async (_case, host, extra, role) => {
    expect(
      await storeRole(masterJob(host, 29500, extra), endpoint(host), [host], local, 'ipv4'),
    ).toEqual(role);
  });

  it.each<[string, Partial<JobShape>, RegExp]>([
    [
      'static rank 0',
      rank(0),
      /^this node has rank 0 and will host torchrun's store, but the master address 198\.18\.10\.1 /,
    ],
    [
      'c10d with is_host=1',
      c10d(true),
      /^this node will host torchrun's c10d store, but the master address 198\.18\.10\.1 /,
    ],
  ])(
    '%s hosts the store even when the address is not its own, with a warning',
    async (_case, extra, warning) => {
      const role = await storeRole(
        masterJob('198.18.10.1', 29500, extra),
        endpoint('198.18.10.1'),
        ['198.18.10.1'],
        local,
        'ipv4',
      );
      expect(role).toMatchObject({ role: 'store host', address: null });
      expect(role.role === 'store host' && role.warning).toMatch(warning);
    },
  );

  it('takes the first address of the chosen family among those given', async () => {
    const role = await storeRole(
      masterJob('m', 29500, rank(1)),
      endpoint('m'),
      ['2001:db8::1', '198.18.10.1'],
      loFacts,
      'ipv4',
    );
    expect(role).toEqual({ role: 'worker', address: '198.18.10.1' });
    await expect(
      storeRole(masterJob('m', 29500), endpoint('m'), ['2001:db8::1'], loFacts, 'ipv4'),
    ).rejects.toThrow(
      new UnresolvableMasterError('the master m has no ipv4 address (it resolves to 2001:db8::1)'),
    );
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
      /^the c10d endpoint 198\.18\.10\.1 is this node's address, but torchrun hosts the store only at localhost, the hostname localhost, its canonical name, an address it resolves to \((127\.0\.0\.1|::1)[^)]*\) or a name resolving to one of those: no node would host it .*; add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it('warns for a name that resolves to this node’s address', async () => {
    expect(await warning(c10d('trainer-0-data'), facts, ['198.18.10.1'])).toMatch(
      /^the c10d endpoint trainer-0-data resolves to this node's address 198\.18\.10\.1, but torchrun hosts the store only .*; add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it("judges an unknown torch by the newest record's rule (what 1.13 would do is the plan's one warning for an unknown torch)", async () => {
    expect(await warning(c10d('trainer-0'), facts, ['127.0.0.1'])).toBeNull();
    expect(await warning(c10d('trainer-0'), facts, ['127.0.0.1'], '1.13.1')).toMatch(
      /^the c10d endpoint trainer-0 resolves to this node's address 127\.0\.0\.1, one its hostname localhost resolves to, but torch 1\.13\.1 compares a name only/,
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
