/**
 * The master checks over real loopback sockets: the store port bind on the
 * master node, and the worker's connect with backoff and progress lines.
 */
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { UnresolvableMasterError } from '../../src/errors.js';
import { EXIT } from '../../src/exit-status.js';
import type { HostFacts } from '../../src/host/host-facts.js';
import type { JobShape } from '../../src/job/job-shape.js';
import { storeRole } from '../../src/job/store-role.js';
import { MIN_ATTEMPT_MS } from '../../src/reach/backoff.js';
import { deadlineIn } from '../../src/reach/clock.js';
import { checkStorePort } from '../../src/verify/check-store-port.js';
import { VerificationFailedError, type VerifyInput, verify } from '../../src/verify/verify.js';
import { waitForEndpoint, waitForStore } from '../../src/verify/wait-for-endpoint.js';
import { endpointOrigins, makeJob, originNamed } from '../fixtures/job-shape.js';
import { asPlanned } from '../fixtures/verify-meeting.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

function hold(host: string, port: number): Promise<void> {
  const server = createServer((socket) => socket.destroy());
  servers.push(server);
  return new Promise((resolve) => server.listen(port, host, () => resolve()));
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function capturingLogger(): { logger: Logger; lines: () => string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines: () => lines };
}

const loFacts: HostFacts = {
  hostname: 'here',
  interfaces: [
    {
      name: 'lo',
      operstate: 'unknown',
      carrier: true,
      addresses: [{ address: '127.0.0.1', family: 'ipv4', prefixLength: 8, scope: 'host' }],
      speedMbps: null,
      mtu: 65536,
      kind: 'loopback',
      master: null,
      rdma: null,
    },
    {
      name: 'ens3f0',
      operstate: 'up',
      carrier: true,
      addresses: [{ address: '198.18.10.2', family: 'ipv4', prefixLength: 24, scope: 'global' }],
      speedMbps: 10_000,
      mtu: 1500,
      kind: 'physical',
      master: null,
      rdma: null,
    },
  ],
  routes: [],
};

function job(host: string, port: number, extra: Partial<JobShape> = {}): JobShape {
  return makeJob({
    master: { host, port, ...endpointOrigins('test') },
    masterAddr: host,
    nnodes: { min: 2, max: 2, origin: originNamed('test') },
    nodeRank: null,
    ...extra,
  });
}

describe('checkStorePort', () => {
  it('binds and releases a free port, so torchrun can take it next', async () => {
    const port = await freePort();
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toEqual({ ok: true });
    await hold('127.0.0.1', port);
  });

  it("names the endpoint's address when the port is held there", async () => {
    const port = await freePort();
    await hold('127.0.0.1', port);
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toEqual({
      ok: false,
      address: '127.0.0.1',
      error: 'port in use',
      detail: 'EADDRINUSE',
    });
  });

  it("fails on the wildcard, as torchrun's store would, when another address holds the port", async () => {
    const port = await freePort();
    await hold('127.0.0.2', port);
    expect(await checkStorePort('127.0.0.1', port, 'ipv4')).toMatchObject({
      ok: false,
      address: '0.0.0.0',
      error: 'port in use',
    });
  });
});

describe('waitForEndpoint', () => {
  it('retries a refusing endpoint until it listens, logging progress while it waits', async () => {
    const port = await freePort();
    const { logger, lines } = capturingLogger();
    setTimeout(() => void hold('127.0.0.1', port), 700);
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port },
      localAddress: '127.0.0.1',
      interfaceName: 'lo',
      deadline: deadlineIn(5_000),
      logger,
      progressEveryMs: 200,
    });
    expect(waited.outcome).toEqual({ ok: true });
    expect(waited.attempts).toBeGreaterThan(1);
    expect(waited.elapsedMs).toBeGreaterThanOrEqual(600);
    expect(lines()[0]).toMatch(
      new RegExp(
        `^waiting for 127\\.0\\.0\\.1:${port} via lo, \\d+s of 5s; last attempt: refused \\(ECONNREFUSED\\)$`,
      ),
    );
  });

  it('gives up at the deadline with the last error', async () => {
    const port = await freePort();
    const { logger } = capturingLogger();
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port },
      localAddress: '127.0.0.1',
      interfaceName: 'lo',
      deadline: deadlineIn(800),
      logger,
    });
    expect(waited.outcome).toEqual({ ok: false, error: 'refused', detail: 'ECONNREFUSED' });
    expect(waited.elapsedMs).toBeGreaterThanOrEqual(800);
    // The last attempt may run MIN_ATTEMPT_MS past the deadline, no more.
    expect(waited.elapsedMs).toBeLessThan(800 + MIN_ATTEMPT_MS + 150);
  });

  it('stops at once when the source address is not on this host', async () => {
    const waited = await waitForEndpoint({
      target: { address: '127.0.0.1', port: 9 },
      localAddress: '198.18.99.99',
      interfaceName: 'ens3f0',
      deadline: deadlineIn(5_000),
      logger: capturingLogger().logger,
    });
    expect(waited).toMatchObject({
      attempts: 1,
      outcome: { ok: false, error: 'address not available' },
    });
  });
});

describe('waitForStore: the master’s addresses in turn, as torch’s TCPStore client', () => {
  it('passes on the second address when nothing listens on the first', async () => {
    const port = await freePort();
    await hold('127.0.0.1', port);
    const waited = await waitForStore({
      addresses: ['127.0.0.2', '127.0.0.1'],
      port,
      interfaceName: 'lo',
      deadline: deadlineIn(5_000),
      logger: capturingLogger().logger,
    });
    expect(waited).toMatchObject({ outcome: { ok: true }, address: '127.0.0.1', attempts: 2 });
  });

  it('names every address that failed, the last one tried first', async () => {
    const port = await freePort();
    const waited = await waitForStore({
      addresses: ['127.0.0.2', '127.0.0.3'],
      port,
      interfaceName: 'lo',
      deadline: deadlineIn(600),
      logger: capturingLogger().logger,
    });
    expect(waited.address).toBe('127.0.0.3');
    expect(waited.outcome).toEqual({
      ok: false,
      error: 'refused',
      detail: 'ECONNREFUSED; before it 127.0.0.2: refused (ECONNREFUSED)',
    });
  });
});

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
    expect(await storeRole(job(host, 29500, extra), endpoint(host), [host], local, 'ipv4')).toEqual(
      role,
    );
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
        job('198.18.10.1', 29500, extra),
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
      job('m', 29500, rank(1)),
      endpoint('m'),
      ['2001:db8::1', '198.18.10.1'],
      loFacts,
      'ipv4',
    );
    expect(role).toEqual({ role: 'worker', address: '198.18.10.1' });
    await expect(
      storeRole(job('m', 29500), endpoint('m'), ['2001:db8::1'], loFacts, 'ipv4'),
    ).rejects.toThrow(
      new UnresolvableMasterError('the master m has no ipv4 address (it resolves to 2001:db8::1)'),
    );
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
    job: job('127.0.0.1', port, { nodeRank: { value: 0, origin: originNamed('test') } }),
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
    await hold('127.0.0.1', port);
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
    await hold('127.0.0.1', port);
    const c10d = job('127.0.0.1', port, { rdzvBackend: 'c10d', isHost, nodeRank: null });
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
    await hold('127.0.0.1', port);
    expect(await verify(await input(port, 'none'))).toMatchObject({ ok: true, results: [] });
    expect(await verify(await input(port, 'local'))).toMatchObject({ ok: true, results: [] });
  });
});
