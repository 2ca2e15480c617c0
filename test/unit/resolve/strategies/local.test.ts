import { describe, expect, it } from 'vitest';
import { local } from '../../../../src/resolve/strategies/local.js';
import { loadFacts, makeContext } from '../../../fixtures/facts/facts-fixtures.js';

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
