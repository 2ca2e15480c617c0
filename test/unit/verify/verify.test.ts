/**
 * verify() over real loopback sockets: at --verify master, the store host's
 * bind and a worker's connect; at --verify peers, between "nodes" that are
 * loopback addresses of this host (127.0.0.1-3), each with facts that hold
 * only its own address: the master (rank 0, 127.0.0.1) runs the registry,
 * every node registers an ephemeral port and meshes.
 */
import { createServer, type Server } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/exit-status.js';
import type { HostFacts, InterfaceFacts } from '../../../src/host/host-facts.js';
import type { JobShape } from '../../../src/job/job-shape.js';
import { jobToken } from '../../../src/membership/token.js';
import { localPortRange } from '../../../src/peers/port-range.js';
import { startProbeService } from '../../../src/probe/service.js';
import { Registry } from '../../../src/registry/registry.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { VerificationFailedError, type VerifyInput, verify } from '../../../src/verify/verify.js';
import { endpointOrigins, makeJob, originNamed } from '../../fixtures/job-shape.js';
import {
  capturingLogger,
  freePort,
  loFacts,
  masterJob,
  portHolder,
} from '../../fixtures/loopback.js';
import { asPlanned } from '../../fixtures/verify-meeting.js';

const servers: Server[] = [];
const held = portHolder();
afterEach(async () => {
  await Promise.all([
    held.closeAll(),
    ...servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  ]);
});

/** A free port: the master's, where the probe's registry meets too (SPEC --probe-port: the rendezvous port). */
const jobPorts = freePort;

function lo(address: string): InterfaceFacts {
  return {
    name: 'lo',
    operstate: 'unknown',
    carrier: true,
    addresses: [{ address, family: 'ipv4', prefixLength: 8, scope: 'host' }],
    speedMbps: null,
    mtu: 65536,
    kind: 'loopback',
    master: null,
    rdma: null,
  };
}

const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];

function node(
  rank: number,
  masterPort: number,
  extra: Partial<VerifyInput> = {},
  job: Partial<JobShape> = {},
): Omit<VerifyInput, 'meeting' | 'role'> {
  const address = ADDRESSES[rank] as string;
  const facts: HostFacts = { hostname: `host${rank}`, interfaces: [lo(address)], routes: [] };
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
      master: { host: '127.0.0.1', port: masterPort, ...endpointOrigins('test') },
      masterAddr: '127.0.0.1',
      nnodes: { min: 3, max: 3, origin: originNamed('test') },
      nodeRank: { value: rank, origin: originNamed('test') },
      jobId: 'job-1',
      ...job,
    }),
    facts,
    timeoutMs: 3_000,
    peers: [],
    logger: pino({ level: 'silent' }),
    routesToMaster: [],
    masterAddresses: ['127.0.0.1'],
    nodeName: `node${rank}`,
    bandwidthWindowMs: 200,
    ...extra,
  };
}

/** The check as the CLI runs it: with the meeting point the plan computes. */
const check = async (input: Omit<VerifyInput, 'meeting' | 'role'>): Promise<VerifyReport> =>
  verify(await asPlanned(input));

const settle = (
  input: Omit<VerifyInput, 'meeting' | 'role'>,
): Promise<VerifyReport | VerificationFailedError> =>
  check(input).catch((error: unknown) => {
    if (error instanceof VerificationFailedError) return error;
    throw error;
  });

const NAMES = ['node0', 'node1', 'node2'];

describe('verify --verify peers, through the master', () => {
  it('passes with no peer list: every node reaches every other at its ephemeral port, each seeing the true source', async () => {
    const port = await jobPorts();
    const [low, high] = await localPortRange();
    const reports = await Promise.all([0, 1, 2].map((rank) => check(node(rank, port))));
    for (const [rank, report] of reports.entries()) {
      expect(report.ok).toBe(true);
      const probes = report.results.filter((result) => result.check === 'probe');
      expect(probes.map((result) => result.peer).sort()).toEqual(
        NAMES.filter((_, i) => i !== rank),
      );
      for (const result of probes) {
        const peerRank = NAMES.indexOf(result.peer);
        expect(result).toMatchObject({
          ok: true,
          address: ADDRESSES[peerRank],
          seenSource: ADDRESSES[rank],
        });
        // The port each peer registered: an ephemeral one, as NCCL's listeners take.
        expect(result.port).toBeGreaterThanOrEqual(low);
        expect(result.port).toBeLessThanOrEqual(high);
        expect(result.inbound).toMatchObject({ ok: true, source: ADDRESSES[peerRank] });
      }
      // Ring order by rank: each node measured its throughput to the next one.
      const next = NAMES[(rank + 1) % 3];
      expect(probes.find((result) => result.peer === next)?.bandwidthMbps).toBeGreaterThan(0);
      const previous = NAMES[(rank + 2) % 3];
      expect(
        probes.find((result) => result.peer === previous)?.inbound?.bandwidthMbps,
      ).toBeGreaterThan(0);
      // The rendezvous completed with every node: nobody waited for a last call or the timeout.
      expect(report.rendezvous).toMatchObject({ nodes: 3, expected: 3 });
    }
    expect(reports[0]?.results.find((result) => result.check === 'bind')).toMatchObject({
      ok: true,
      port,
    });
  });

  it('names a node that never comes by its Slurm name, on every node that came', async () => {
    const port = await jobPorts();
    const job = { clusterPeers: ['gpu-a', 'gpu-b', 'gpu-c'], cluster: 'slurm' as const };
    const outcomes = await Promise.all(
      [0, 1].map((rank) => settle(node(rank, port, { timeoutMs: 1_200 }, job))),
    );
    for (const outcome of outcomes) {
      expect(outcome).toBeInstanceOf(VerificationFailedError);
      const failure = outcome as VerificationFailedError;
      expect(failure.exitCode).toBe(75);
      expect(failure.message).toMatch(
        /^verification failed via lo \(127\.0\.0\.[12]\): gpu-c never registered: did not register with the master's probe service \(127\.0\.0\.1 at 127\.0\.0\.1:\d+\) in 1\.2s; 2 of 3 nodes registered$/,
      );
      expect(failure.report.results).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            peer: 'gpu-c',
            check: 'register',
            ok: false,
            error: 'not registered',
            address: null,
          }),
        ]),
      );
    }
  });

  it("does not take another job's probe service for the master's", async () => {
    const port = await jobPorts();
    const theirs = await startProbeService({
      host: '127.0.0.1',
      port,
      token: jobToken({ master: { host: '127.0.0.1', port }, jobId: 'job-2', probePort: port }),
      maxPending: 8,
      registry: new Registry({
        round: 'register',
        token: '0'.repeat(32),
        expected: 2,
        nodeList: [],
        restrict: null,
      }),
    });
    try {
      const mine = (await settle(node(1, port, { timeoutMs: 1_000 }))) as VerificationFailedError;
      expect(mine).toBeInstanceOf(VerificationFailedError);
      expect(mine.report.results).toEqual([
        expect.objectContaining({ peer: '127.0.0.1', check: 'register', error: 'other job' }),
      ]);
    } finally {
      await theirs.close();
    }
  });

  it('fails at once, naming the port, when the rendezvous port (where the probe meets) is taken on the master', async () => {
    const port = await jobPorts();
    const holder = createServer();
    servers.push(holder);
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const failure = (await settle(node(0, port))) as VerificationFailedError;
    expect(failure).toBeInstanceOf(VerificationFailedError);
    expect(failure.message).toBe(
      `verification failed via lo (127.0.0.1): this node hosts the rendezvous of 127.0.0.1, but 127.0.0.1:${port} cannot be bound: port in use (EADDRINUSE); torchrun's store would fail to start`,
    );
    // At once: nothing after the bind was tried (no registration, no mesh).
    expect(failure.report.results.map((result) => result.check)).toEqual(['bind']);
  });

  it('--peers restricts the mesh to the nodes it lists; a node left out checks nothing', async () => {
    const port = await jobPorts();
    const peers = ['node0', '127.0.0.3'];
    const reports = await Promise.all([0, 1, 2].map((rank) => check(node(rank, port, { peers }))));
    const probed = reports.map((report) =>
      report.results.filter((result) => result.check === 'probe').map((result) => result.peer),
    );
    expect(probed).toEqual([['node2'], [], ['node0']]);
  });

  it('--min-bandwidth above what loopback carries fails both ends of each pair, naming the pair and the figure', async () => {
    const port = await jobPorts();
    const outcomes = await Promise.all(
      [0, 1, 2].map((rank) => settle(node(rank, port, { minBandwidthMbps: 1e9 }))),
    );
    for (const [rank, outcome] of outcomes.entries()) {
      const failure = outcome as VerificationFailedError;
      expect(failure).toBeInstanceOf(VerificationFailedError);
      const next = NAMES[(rank + 1) % 3];
      expect(failure.message).toMatch(
        new RegExp(
          `this node → ${next}: below the bandwidth \\(node${rank} → ${next} measured [\\d.]+ [GM]bit/s, below --min-bandwidth 1000000 Gbit/s\\)`,
        ),
      );
      const previous = NAMES[(rank + 2) % 3];
      expect(
        failure.report.results.find((result) => result.peer === previous)?.inbound,
      ).toMatchObject({
        ok: false,
        error: 'below the bandwidth',
      });
    }
  });

  it('without --min-bandwidth, a rate far below what the link says it runs at is a warning', async () => {
    const port = await jobPorts();
    // sysfs claiming 100 Tbit/s: loopback carries nowhere near a tenth of it.
    const fast = (rank: number) => {
      const input = node(rank, port);
      const [iface] = input.facts.interfaces as [InterfaceFacts];
      return { ...input, facts: { ...input.facts, interfaces: [{ ...iface, speedMbps: 1e8 }] } };
    };
    const reports = await Promise.all([0, 1, 2].map((rank) => check(fast(rank))));
    expect(reports[0]?.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^throughput node0 → node1 via lo is [\d.]+ [GM]bit\/s, under a tenth of the link's 100000 Gbit\/s \(the slower end's speed\)/,
        ),
      ]),
    );
    expect(reports.every((report) => report.ok)).toBe(true);
  });

  it("meets at an IPv6 master's store although NCCL's address is lo's IPv4 one (a single-node IPv6 job)", async () => {
    const port = await jobPorts();
    const input = node(
      0,
      port,
      { masterAddresses: ['::1'], masterFamily: 'ipv6' },
      {
        master: { host: '::1', port, ...endpointOrigins('test') },
        nnodes: { min: 1, max: 1, origin: originNamed('test') },
      },
    );
    const report = await check({
      ...input,
      facts: {
        ...input.facts,
        interfaces: [
          {
            ...lo('127.0.0.1'),
            addresses: [
              ...lo('127.0.0.1').addresses,
              { address: '::1', family: 'ipv6', prefixLength: 128, scope: 'host' },
            ],
          },
        ],
      },
    });
    expect(report.ok).toBe(true);
    expect(report.results.map((result) => result.check)).toEqual(['bind']);
  });

  it('refuses a second node claiming a rank, saying who holds it', async () => {
    const port = await jobPorts();
    const twin = node(1, port, { timeoutMs: 1_500 });
    const [master, first, second] = await Promise.all([
      settle(node(0, port, { timeoutMs: 1_500 })),
      settle(node(1, port, { timeoutMs: 1_500 })),
      settle({
        ...twin,
        decision: { ...twin.decision, address: '127.0.0.3' },
        facts: { ...twin.facts, interfaces: [lo('127.0.0.3')] },
      }),
    ]);
    const rejected = [first, second].find(
      (outcome) =>
        outcome instanceof VerificationFailedError &&
        outcome.report.results[0]?.error === 'rejected',
    ) as VerificationFailedError;
    expect(rejected.report.results[0]?.detail).toMatch(
      /^rank 1 is registered already, by node1 from 127\.0\.0\.1 \(127\.0\.0\.[23]\)(, which still answers there)?: two nodes claim it$/,
    );
    expect(master).toBeInstanceOf(VerificationFailedError);
  });
});

describe('verify, master level, on this host', () => {
  const base = (
    port: number,
    level: VerifyInput['level'] = 'master',
  ): Omit<VerifyInput, 'meeting' | 'role'> => ({
    level,
    decision: {
      interface: 'lo',
      address: '127.0.0.1',
      family: 'ipv4',
      strategy: 'local',
      reason: 'test',
      trace: [],
    },
    job: masterJob('127.0.0.1', port, { nodeRank: { value: 0, origin: originNamed('test') } }),
    facts: loFacts,
    timeoutMs: 2_000,
    peers: [],
    logger: capturingLogger().logger,
    routesToMaster: [],
    masterAddresses: ['127.0.0.1'],
  });

  it('passes the master node whose rendezvous port is free', async () => {
    const port = await freePort();
    const report = await verify(await input(port));
    expect(report).toMatchObject({
      level: 'master',
      ok: true,
      interface: 'lo',
      localAddress: '127.0.0.1',
    });
    expect(report.results).toEqual([
      expect.objectContaining({
        check: 'bind',
        peer: '127.0.0.1',
        address: '127.0.0.1',
        port,
        ok: true,
      }),
    ]);
  });
  /** The check of a plan with this port and level: its store role as the plan decides it. */
  const input = (port: number, level: VerifyInput['level'] = 'master') =>
    asPlanned(base(port, level));

  it('fails with exit 75, naming the port and address, when the port is taken', async () => {
    const port = await freePort();
    await held.hold('127.0.0.1', port);
    const failure = await verify(await input(port)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(VerificationFailedError);
    const error = failure as VerificationFailedError;
    expect(error.exitCode).toBe(EXIT.unreachable);
    expect(error.message).toBe(
      `verification failed via lo (127.0.0.1): this node hosts the rendezvous of 127.0.0.1, but 127.0.0.1:${port} cannot be bound: port in use (EADDRINUSE); torchrun's store would fail to start`,
    );
    expect(error.details).toHaveLength(1);
    expect(error.report.results[0]).toMatchObject({
      ok: false,
      error: 'port in use',
      check: 'bind',
    });
  });

  it.each<[string, boolean | null, { ok: boolean; check: string }]>([
    [
      'inferred: a client of whoever holds the port, as torch falls back',
      null,
      { ok: true, check: 'connect' },
    ],
    ['is_host=1: the port must be its own', true, { ok: false, check: 'bind' }],
  ])('c10d store host whose port is taken, %s', async (_case, isHost, expected) => {
    const port = await freePort();
    await held.hold('127.0.0.1', port);
    const c10d = masterJob('127.0.0.1', port, { rdzvBackend: 'c10d', isHost, nodeRank: null });
    const outcome = await verify(
      await asPlanned({ ...base(port), job: c10d, facts: { ...loFacts, hostname: 'localhost' } }),
    ).then(
      (report) => report,
      (error: VerificationFailedError) => error.report,
    );
    // The store check comes first; a client also checks the data path after it.
    expect(outcome.results[0]).toEqual(expect.objectContaining({ ...expected, port }));
  });

  it('checks nothing at level none, and no port at level local', async () => {
    const port = await freePort();
    await held.hold('127.0.0.1', port);
    expect(await verify(await input(port, 'none'))).toMatchObject({ ok: true, results: [] });
    expect(await verify(await input(port, 'local'))).toMatchObject({ ok: true, results: [] });
  });
});
