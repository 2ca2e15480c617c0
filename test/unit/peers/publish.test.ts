/**
 * The rendezvous before the chain (SPEC `agree`) between "nodes" on
 * loopback addresses: when it runs, what every node gets back, and the 75
 * that names a node that never published.
 */
import { createServer } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { UnreachableError } from '../../../src/errors.js';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { storeRole } from '../../../src/job/store-role.js';
import { meetingPoint } from '../../../src/peers/meeting-point.js';
import { type PublishInput, publishNetworks } from '../../../src/peers/publish.js';
import { makeContext } from '../../fixtures/facts/facts-fixtures.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A node whose only usable interface is on 198.18.70.0/24; it reaches the master on loopback. */
/** Its publish round as the plan sets it up: the meeting point at probePort. */
async function node(
  rank: number,
  probePort: number,
  nnodes = 3,
  extra: Partial<PublishInput['options']> = {},
): Promise<PublishInput> {
  const facts: HostFacts = {
    hostname: `gpu-${rank}`,
    interfaces: [
      {
        name: 'ens3f0',
        operstate: 'up',
        carrier: true,
        addresses: [
          { address: `198.18.70.${rank + 1}`, family: 'ipv4', prefixLength: 24, scope: 'global' },
        ],
        speedMbps: 100_000,
        mtu: 9000,
        kind: 'physical',
        master: null,
        rdma: null,
      },
    ],
    routes: [],
  };
  const job = makeJob({
    master: { host: '127.0.0.1', port: 29500, ...endpointOrigins('test') },
    nnodes: { min: nnodes, max: nnodes, origin: originNamed('test') },
    nodeRank: { value: rank, origin: originNamed('test') },
    clusterPeers: ['gpu-a', 'gpu-b', 'gpu-c'],
  });
  return {
    options: { verify: 'peers', verifyTimeout: 1_000, peers: null, ...extra },
    job,
    facts,
    context: makeContext({ master: { host: '127.0.0.1', addresses: ['127.0.0.1'] } }),
    meeting: await meetingPoint({
      job,
      probePort,
      masterAddresses: ['127.0.0.1'],
      family: 'ipv4',
      role: await storeRole(
        job,
        job.master as NonNullable<typeof job.master>,
        ['127.0.0.1'],
        facts,
        'ipv4',
      ),
      secretFile: null,
    }),
    logger: pino({ level: 'silent' }),
  };
}

describe('publishNetworks', () => {
  it('gives every node the same table of what all of them have', async () => {
    const port = await freePort();
    const agreements = await Promise.all(
      [0, 1, 2].map(async (rank) => publishNetworks(await node(rank, port))),
    );
    for (const agreement of agreements) {
      expect(agreement).toEqual({
        kind: 'published',
        table: {
          nodes: 3,
          common: [
            {
              network: '198.18.70.0',
              prefixLength: 24,
              slowestMbps: 100_000,
              rdma: false,
              duplicated: [],
            },
          ],
          partial: [],
          partialMore: 0,
        },
      });
    }
  });

  it('is 75, naming the node that never published, at the timeout', async () => {
    const port = await freePort();
    const outcomes = await Promise.all(
      [0, 1].map(async (rank) =>
        publishNetworks(await node(rank, port)).catch((error: unknown) => error),
      ),
    );
    for (const outcome of outcomes) {
      expect(outcome).toBeInstanceOf(UnreachableError);
      expect((outcome as UnreachableError).message).toBe(
        `agree: not every node published its interfaces to the master's probe service (127.0.0.1 at 127.0.0.1:${port}) in 1s: 2 of 3 nodes published their interfaces, missing: gpu-c`,
      );
    }
  });

  it('says why it did not run: below --verify peers, or one node', async () => {
    expect(await publishNetworks(await node(0, 1, 3, { verify: 'master' }))).toEqual({
      kind: 'unavailable',
      reason: 'the nodes meet only with --verify peers (the level is master)',
    });
    const single = { ...(await node(0, 1, 1)), context: makeContext({ singleNode: true }) };
    expect(await publishNetworks(single)).toEqual({
      kind: 'unavailable',
      reason: 'a single-node job: nothing to agree with',
    });
  });
});
