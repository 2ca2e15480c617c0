/**
 * `--verify peers` between "nodes" that are loopback addresses of this host
 * (127.0.0.1-3), each running verify() with facts that hold only its own
 * address, over real sockets.
 */
import { createServer, type Server } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import type { HostFacts, InterfaceFacts } from '../../src/host/host-facts.js';
import { planPeers } from '../../src/verify/peer-list.js';
import { startProbeListener } from '../../src/verify/probe-listener.js';
import { jobToken } from '../../src/verify/probe-token.js';
import {
  VerificationFailedError,
  type VerifyInput,
  type VerifyReport,
  verify,
} from '../../src/verify/verify.js';
import { makeJob } from '../fixtures/job-shape.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function lo(...addresses: string[]): InterfaceFacts {
  return {
    name: 'lo',
    operstate: 'unknown',
    carrier: true,
    addresses: addresses.map((address) => ({
      address,
      family: 'ipv4',
      prefixLength: 8,
      scope: 'host',
    })),
    speedMbps: null,
    mtu: 65536,
    kind: 'loopback',
    master: null,
    rdma: null,
  };
}

function node(
  address: string,
  peers: string[],
  probePort: number,
  extra: Partial<VerifyInput> = {},
): VerifyInput {
  const facts: HostFacts = { hostname: address, interfaces: [lo(address)], routes: [] };
  return {
    level: 'peers',
    decision: {
      interface: 'lo',
      address,
      family: 'ipv4',
      strategy: 'explicit',
      reason: 'test',
      trace: [],
    },
    job: makeJob({
      master: null,
      masterAddr: null,
      nnodes: { min: peers.length, max: peers.length, source: 'test' },
      nodeRank: null,
    }),
    facts,
    timeoutMs: 3_000,
    peers,
    probePort,
    logger: pino({ level: 'silent' }),
    routesToMaster: [],
    masterAddresses: [],
    jobId: 'job-1',
    ...extra,
  };
}

const settle = (input: VerifyInput): Promise<VerifyReport | VerificationFailedError> =>
  verify(input).catch((error: unknown) => {
    if (error instanceof VerificationFailedError) return error;
    throw error;
  });

const PEERS = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];

describe('verify --verify peers', () => {
  it('passes when every node reaches and is reached by every other, each seeing the true source', async () => {
    const port = await freePort();
    const reports = await Promise.all(PEERS.map((address) => verify(node(address, PEERS, port))));
    for (const [index, report] of reports.entries()) {
      const self = PEERS[index];
      expect(report.ok).toBe(true);
      expect(report.results.map((result) => result.peer).sort()).toEqual(
        PEERS.filter((peer) => peer !== self),
      );
      for (const result of report.results) {
        expect(result).toMatchObject({ check: 'probe', ok: true, port, seenSource: self });
        expect(result.inbound).toEqual({
          ok: true,
          error: null,
          detail: null,
          source: result.peer,
        });
      }
      // Ends as soon as all legs are done, far before the 3s timeout.
      expect(report.elapsedMs).toBeLessThan(2_000);
    }
  });

  it('names exactly the failing pairs when one node never comes', async () => {
    const port = await freePort();
    const outcomes = await Promise.all(
      PEERS.slice(0, 2).map((address) => settle(node(address, PEERS, port, { timeoutMs: 1_500 }))),
    );
    for (const [index, outcome] of outcomes.entries()) {
      expect(outcome).toBeInstanceOf(VerificationFailedError);
      const failure = outcome as VerificationFailedError;
      const self = PEERS[index] as string;
      const other = PEERS[1 - index] as string;
      expect(failure.exitCode).toBe(75);
      expect(failure.message).toBe(
        `verification failed via lo (${self}): peer 127.0.0.3 at 127.0.0.3:${port}: this node → 127.0.0.3: refused (ECONNREFUSED); 127.0.0.3 → this node: timed out (did not reach ${self}:${port} in 1.5s)`,
      );
      expect(failure.details).toHaveLength(1);
      const byPeer = Object.fromEntries(
        failure.report.results.map((result) => [result.peer, result]),
      );
      expect(byPeer[other]).toMatchObject({ ok: true });
      expect(byPeer['127.0.0.3']).toMatchObject({
        ok: false,
        error: 'refused',
        inbound: { ok: false, error: 'timed out' },
      });
      expect(failure.report.elapsedMs).toBeGreaterThanOrEqual(1_500);
      expect(failure.report.elapsedMs).toBeLessThan(2_500);
    }
  });

  it("does not take another job's listener for a peer", async () => {
    const port = await freePort();
    const pair = ['127.0.0.1', '127.0.0.2'];
    // Another job's probe on the same port of the other node, for the whole check.
    const theirs = await startProbeListener({
      address: '127.0.0.2',
      port,
      token: jobToken({ master: null, jobId: 'job-2', peers: pair, probePort: port }),
      maxConnections: 4,
      onHello: () => {},
    });
    try {
      const mine = await settle(
        node('127.0.0.1', pair, port, { timeoutMs: 1_000, jobId: 'job-1' }),
      );
      expect(mine).toBeInstanceOf(VerificationFailedError);
      expect((mine as VerificationFailedError).report.results).toEqual([
        expect.objectContaining({
          peer: '127.0.0.2',
          error: 'other job',
          detail: 'its probe token differs from ours',
          inbound: expect.objectContaining({ ok: false, error: 'timed out' }),
        }),
      ]);
    } finally {
      await theirs.close();
    }
  });

  it('fails at once, naming the port, when the probe port is taken on this node', async () => {
    const port = await freePort();
    const holder = createServer();
    servers.push(holder);
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const failure = (await settle(node('127.0.0.1', PEERS, port))) as VerificationFailedError;
    expect(failure).toBeInstanceOf(VerificationFailedError);
    expect(failure.message).toBe(
      `verification failed via lo (127.0.0.1): the probe listener cannot bind 127.0.0.1:${port}: port in use (EADDRINUSE)`,
    );
    expect(failure.report.elapsedMs).toBeLessThan(500);
  });

  it('refuses a peer list that does not name this node, and a missing one', async () => {
    await expect(verify(node('127.0.0.9', PEERS, 29501))).rejects.toThrow(ConfigError);
    await expect(verify(node('127.0.0.1', [], 29501))).rejects.toThrow(
      '--verify peers needs the list of nodes: give --peers, or run it under Slurm',
    );
  });
});

describe('planPeers', () => {
  const facts: HostFacts = {
    hostname: 'n2',
    interfaces: [
      lo('127.0.0.1'),
      {
        ...lo(),
        name: 'ens3f0',
        kind: 'physical',
        addresses: [{ address: '198.18.10.2', family: 'ipv4', prefixLength: 24, scope: 'global' }],
      },
    ],
    routes: [],
  };
  const chosen = facts.interfaces[1] as InterfaceFacts;

  it('finds this node by its addresses and dials each other node on the chosen link', () => {
    const plan = planPeers(
      [
        { name: 'n1', addresses: ['203.0.113.1', '198.18.10.1'] },
        { name: 'n2', addresses: ['203.0.113.2', '198.18.10.2'] },
        { name: 'n3', addresses: ['203.0.113.3'] },
        { name: '198.18.10.1', addresses: ['198.18.10.1'] },
      ],
      facts,
      chosen,
    );
    expect(plan).toEqual({
      self: 'n2',
      others: [
        { name: 'n1', address: '198.18.10.1' },
        { name: 'n3', address: '203.0.113.3' },
      ],
    });
  });

  it('says which addresses it looked for when the list does not name this node', () => {
    expect(() => planPeers([{ name: 'n1', addresses: ['198.18.10.1'] }], facts, chosen)).toThrow(
      "the peer list (n1) does not name this host: none of its entries resolves to one of this host's addresses (127.0.0.1, 198.18.10.2)",
    );
  });
});
