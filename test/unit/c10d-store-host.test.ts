import { describe, expect, it } from 'vitest';
import { c10dStoreHostWarning } from '../../src/env/c10d-store-host.js';
import type { HostFacts } from '../../src/host/host-facts.js';
import type { JobShape } from '../../src/job/job-shape.js';
import { makeJob } from '../fixtures/job-shape.js';

// `localhost` resolves through /etc/hosts alone: no DNS query leaves the machine.
const facts: HostFacts = {
  hostname: 'localhost',
  routes: [],
  interfaces: [
    {
      name: 'ens3f0',
      operstate: 'up',
      carrier: true,
      addresses: [{ address: '198.18.10.1', family: 'ipv4', prefixLength: 24, scope: 'global' }],
      speedMbps: 100_000,
      mtu: 9000,
      kind: 'physical',
      master: null,
      rdma: null,
    },
  ],
};

function c10d(host: string, isHost: boolean | null = null): JobShape {
  return makeJob({
    rdzvBackend: 'c10d',
    master: { host, port: 29400, source: '--rdzv-endpoint' },
    masterAddr: null,
    nnodes: { min: 2, max: 2, source: '--nnodes' },
    nodeRank: null,
    isHost,
  });
}

describe('c10dStoreHostWarning (torch hosts the c10d store only on an address the hostname resolves to)', () => {
  it('warns when the endpoint is this node’s address but not its hostname’s', async () => {
    expect(await c10dStoreHostWarning(c10d('198.18.10.1'), facts)).toMatch(
      /^the c10d endpoint 198\.18\.10\.1 is this node's address, but torchrun only hosts the store on an address its hostname localhost resolves to \((127\.0\.0\.1|::1)[^)]*\): .*add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it.each([
    ['is_host is given', c10d('198.18.10.1', true)],
    ['the endpoint is another node', c10d('198.18.10.2')],
    ['the endpoint is loopback', c10d('127.0.0.1')],
    ['the endpoint is a name (torch compares names by name)', c10d('trainer-0')],
    ['the backend is static', { ...c10d('198.18.10.1'), rdzvBackend: 'static' }],
  ])('says nothing when %s', async (_why, job) => {
    expect(await c10dStoreHostWarning(job, facts)).toBeNull();
  });
});
