import { describe, expect, it } from 'vitest';
import type { JobShape } from '../../src/job/job-shape.js';
import { isSingleNode } from '../../src/job/single-node.js';
import { local } from '../../src/resolve/strategies/local.js';
import { loadFacts, makeContext } from '../fixtures/facts/facts-fixtures.js';
import { makeJob, originNamed } from '../fixtures/job-shape.js';

describe('local', () => {
  it('picks lo for a single-node job, though lo is on the default excludes', () => {
    expect(local(loadFacts('infiniband-node'), makeContext({ singleNode: true }))).toEqual({
      outcome: 'picked',
      interface: 'lo',
      address: '127.0.0.1',
      reason: 'single-node job: every rank is on this host, so lo (127.0.0.1) carries it',
    });
  });

  it('picks ::1 for IPv6', () => {
    const outcome = local(
      loadFacts('ipv6-only'),
      makeContext({ singleNode: true, family: 'ipv6' }),
    );
    expect(outcome).toMatchObject({ outcome: 'picked', interface: 'lo', address: '::1' });
  });

  it('skips a multi-node job', () => {
    expect(local(loadFacts('docker-host'), makeContext())).toEqual({
      outcome: 'skipped',
      reason:
        'the job is not single-node (not --standalone, and more than one node or a master on another host)',
    });
  });

  it('skips when lo is down', () => {
    const facts = loadFacts('docker-host');
    const down = {
      ...facts,
      interfaces: facts.interfaces.map((i) =>
        i.name === 'lo' ? { ...i, operstate: 'down', carrier: null } : i,
      ),
    };
    expect(local(down, makeContext({ singleNode: true }))).toEqual({
      outcome: 'skipped',
      reason: 'single-node job, but lo is down',
    });
  });

  it('skips when lo has no address of the family', () => {
    const facts = loadFacts('docker-host');
    const v4only = {
      ...facts,
      interfaces: facts.interfaces.map((i) =>
        i.name === 'lo' ? { ...i, addresses: i.addresses.filter((a) => a.family === 'ipv4') } : i,
      ),
    };
    expect(local(v4only, makeContext({ singleNode: true, family: 'ipv6' }))).toEqual({
      outcome: 'skipped',
      reason: 'single-node job, but lo has no IPv6 loopback address',
    });
  });
});

const job = makeJob;

describe('isSingleNode (SPEC `local`)', () => {
  const master = loadFacts('master-node');
  const nnodes = (min: number, max: number) => ({ min, max, origin: originNamed('--nnodes') });
  it.each<[string, Partial<JobShape>, string[], boolean]>([
    ['torchrun defaults: one node, master 127.0.0.1', {}, ['127.0.0.1'], true],
    [
      '--standalone, whatever else',
      { standalone: true, master: null, nnodes: nnodes(2, 2) },
      [],
      true,
    ],
    ['one node, no master at all', { master: null }, [], true],
    ['one node, master ::1', {}, ['::1'], true],
    // Debian's /etc/hosts maps the hostname to 127.0.1.1: still this host.
    ['one node, hostname on 127.0.1.1', {}, ['127.0.1.1'], true],
    ["one node, master is this host's own address", {}, ['198.18.60.10'], true],
    ['one node, own IPv6 address spelt long', {}, ['2001:db8:60:0:0:0:0:10'], true],
    ['one node, master another host', {}, ['198.18.60.11'], false],
    [
      'one node, a name resolving to this host and another',
      {},
      ['198.18.60.10', '198.18.60.11'],
      false,
    ],
    ['two nodes, master here', { nnodes: nnodes(2, 2) }, ['198.18.60.10'], false],
    ['elastic 1:2, a peer may join', { nnodes: nnodes(1, 2) }, ['127.0.0.1'], false],
  ])('%s → %s', (_, shape, addresses, expected) => {
    expect(isSingleNode(job(shape), addresses, master)).toBe(expected);
  });
});
