/**
 * `nccl-run check --verify peers` for the jobs real clusters run (issue 21),
 * through the built CLI on namespace hosts on one data switch: an elastic
 * --nnodes MIN:MAX that completes as torch's c10d rendezvous does, a node
 * whose check is stopped and rerun, a node that comes after completion,
 * two jobs side by side on adjacent master ports or sharing a node, and
 * membership: a stranger claiming a node's address or an absent rank's is
 * no member, while nodes whose source differs legitimately (a management
 * network that the master's name resolves to, a NAT) are.
 *
 *   a, b     ens3f0 198.18.40.1-2 (data), eno1 203.0.113.1-2 (management)
 *   c, d     ens3f0 198.18.40.3-4
 *   r        a router on the data switch (198.18.40.5) that masquerades
 *   e        behind r: ens3f0 198.19.5.2, reached by a through r
 *
 * Every run is bounded; waits are on observable state (a connection the
 * master holds, a port listening).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/probe/protocol.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { type CheckRun, CLI, startCheck } from './check-on-node.js';

const HOSTS = ['a', 'b', 'c', 'd'] as const;
type Host = (typeof HOSTS)[number];
const DATA: Record<Host, string> = {
  a: '198.18.40.1',
  b: '198.18.40.2',
  c: '198.18.40.3',
  d: '198.18.40.4',
};
const MGMT = { a: '203.0.113.1', b: '203.0.113.2' } as const;
const ROUTER = '198.18.40.5';
const BEHIND_NAT = '198.19.5.2';
const HOSTS_FILE = `127.0.0.1 localhost\n${HOSTS.map((h) => `${DATA[h]} node-${h}`).join('\n')}\n${MGMT.a} node-a-mgmt\n`;

const probes = (run: CheckRun) =>
  run.report?.results.filter((result) => result.check === 'probe') ?? [];

tier('verify peers for real jobs: elastic sizes, reruns, neighbours', netnsUnavailable, () => {
  const lab = new Lab('vj');

  beforeAll(async () => {
    await lab.host('sw');
    await lab.ip('sw', 'link', 'add', 'data', 'type', 'bridge');
    await lab.ip('sw', 'link', 'set', 'data', 'up');
    for (const host of HOSTS) {
      await lab.host(host, HOSTS_FILE);
      await lab.link(host, 'ens3f0', 'sw', `d-${host}`);
      await lab.ip('sw', 'link', 'set', `d-${host}`, 'master', 'data');
      await lab.addr(host, 'ens3f0', `${DATA[host]}/24`);
    }
    // The management network a and b also have: node-a-mgmt names a there.
    await lab.ip('sw', 'link', 'add', 'mgmt', 'type', 'bridge');
    await lab.ip('sw', 'link', 'set', 'mgmt', 'up');
    for (const host of ['a', 'b'] as const) {
      await lab.link(host, 'eno1', 'sw', `m-${host}`);
      await lab.ip('sw', 'link', 'set', `m-${host}`, 'master', 'mgmt');
      await lab.addr(host, 'eno1', `${MGMT[host]}/24`);
    }
    // e behind a masquerading router: what e sends to the data switch leaves as r's.
    await lab.host('r');
    await lab.link('r', 'ens3f0', 'sw', 'd-r');
    await lab.ip('sw', 'link', 'set', 'd-r', 'master', 'data');
    await lab.addr('r', 'ens3f0', `${ROUTER}/24`);
    await lab.host('e', HOSTS_FILE);
    await lab.link('e', 'ens3f0', 'r', 'lan0');
    await lab.addr('e', 'ens3f0', `${BEHIND_NAT}/24`);
    await lab.addr('r', 'lan0', '198.19.5.1/24');
    await lab.ip('e', 'route', 'add', 'default', 'via', '198.19.5.1');
    await lab.ip('a', 'route', 'add', '198.19.5.0/24', 'via', ROUTER);
    await lab.exec('r', 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    await lab.exec('r', 'iptables', [
      ...['-t', 'nat', '-A', 'POSTROUTING', '-s', '198.19.5.0/24', '-o', 'ens3f0'],
      ...['-j', 'MASQUERADE'],
    ]);
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  /** A fixed-size static job at MASTER:PORT: rank n's arguments, nccl-run's own `extra` first. */
  const fixed =
    (port: number, nnodes: number, timeout: string, master = 'node-a', extra: string[] = []) =>
    (n: number) => [
      ...['--iface', 'ens3f0', '--verify', 'peers', '--verify-timeout', timeout, ...extra],
      `--nnodes=${nnodes}`,
      `--node_rank=${n}`,
      `--master_addr=${master}`,
      `--master_port=${port}`,
      'train.py',
    ];

  /** An elastic c10d job at node-a:PORT, torchrun's own arguments. */
  const elastic = (port: number, nnodes: string, conf: string, timeout = '40s') => [
    '--iface',
    'ens3f0',
    '--verify',
    'peers',
    '--verify-timeout',
    timeout,
    `--nnodes=${nnodes}`,
    '--rdzv_backend=c10d',
    `--rdzv_endpoint=node-a:${port}`,
    ...(conf === '' ? [] : ['--rdzv_conf', conf]),
    'train.py',
  ];
  const check = (host: Host | 'e', args: string[], cancelSignal?: AbortSignal) =>
    startCheck(lab, host, {
      hostname: `node-${host}`,
      args,
      timeoutMs: 90_000,
      ...(cancelSignal && { cancelSignal }),
    });

  /** Established connections into node-a's PORT from `from`, as the master holds them. */
  const held = async (port: number, from: Host): Promise<number> => {
    const listing = await lab.exec('a', 'ss', [
      '-Htn',
      'state',
      'established',
      `( sport = :${port} )`,
    ]);
    return String(listing.stdout)
      .split('\n')
      .filter((line) => line.includes(`${DATA[from]}:`)).length;
  };
  const until = async (what: string, done: () => Promise<boolean>): Promise<void> => {
    const started = performance.now();
    while (!(await done())) {
      if (performance.now() - started > 40_000) throw new Error(`${what}: not after 40 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('--nnodes 2:4 with 3 nodes: all start after the last call, saying they start below MAX', async () => {
    const args = elastic(29410, '2:4', 'last_call_timeout=3');
    const started = performance.now();
    const runs = await Promise.all((['a', 'b', 'c'] as const).map((host) => check(host, args)));
    for (const run of runs) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      expect(run.report?.rendezvous).toEqual({ nodes: 3, expected: 4, late: false });
      expect(run.report?.warnings).toContainEqual(
        expect.stringMatching(
          /completed with 3 of at most 4 nodes after the last call: the job starts below MAX/,
        ),
      );
      expect(probes(run)).toHaveLength(2);
      // No secret given: the log says what the token is worth.
      expect(run.logs.map((line) => line.msg)).toContainEqual(
        expect.stringMatching(/^probe membership by token only: .* does not keep strangers out/),
      );
    }
    // No sooner than the last call of 3 s, and not at the 40 s timeout.
    expect(performance.now() - started).toBeGreaterThanOrEqual(3_000);
    for (const run of runs) expect(run.report?.elapsedMs).toBeLessThan(40_000);
  });

  it('--nnodes 2:4 with all 4: complete at once, the 30 s last call never waited for', async () => {
    const runs = await Promise.all(HOSTS.map((host) => check(host, elastic(29420, '2:4', ''))));
    for (const run of runs) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      expect(run.report?.rendezvous).toEqual({ nodes: 4, expected: 4, late: false });
      // Not after a last call: every node's report has no warning of starting below MAX.
      expect(run.report?.warnings.join('\n')).not.toMatch(/after the last call/);
    }
  });

  it('a node whose check is stopped while it waits, then rerun, takes its own place; none fails dialling the dead one', async () => {
    const port = 29430;
    const rank = fixed(port, 3, '40s');
    const master = check('a', rank(0));
    const stop = new AbortController();
    const first = check('b', rank(1), stop.signal);
    await until('node-b registered', async () => (await held(port, 'b')) > 0);
    stop.abort();
    expect((await first).code).not.toBe(0);
    await until('node-b gone', async () => (await held(port, 'b')) === 0);
    const rerun = check('b', rank(1));
    await until('the rerun registered', async () => (await held(port, 'b')) > 0);
    const runs = { a: await Promise.all([master, rerun, check('c', rank(2))]) };
    for (const run of runs.a) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      expect(probes(run).every((probe) => probe.ok)).toBe(true);
      expect(probes(run)).toHaveLength(2);
    }
  });

  it('a node that comes after an elastic job completed is told so and starts, as torch puts it on the wait list', async () => {
    const port = 29440;
    const args = elastic(port, '2:3', 'last_call_timeout=1', '20s');
    const [a, b] = await Promise.all([check('a', args), check('b', args)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    // The job runs: its store host's torchrun holds the port. A stand-in for torch's
    // TCPStore, which closes a connection whose first byte is no query type of its own
    // (TCPStoreBackend.cpp queryFds), as a probe line's '{' is not.
    const store = lab.exec(
      'a',
      'node',
      [
        '-e',
        `require('node:net').createServer((s) => s.on('data', () => s.destroy())).listen(${port}, () => console.log('listening'))`,
      ],
      { reject: false, timeout: 60_000 },
    );
    await until('the store listening', async () => {
      const listing = await lab.exec('a', 'ss', ['-Htln', `( sport = :${port} )`]);
      return String(listing.stdout).trim() !== '';
    });
    const late = await check('c', args);
    store.kill();
    expect(late.code, JSON.stringify(late.error)).toBe(0);
    expect(late.report?.rendezvous).toEqual({ nodes: null, expected: 3, late: true });
    expect(late.logs.map((line) => line.msg)).toContainEqual(
      expect.stringMatching(
        /the elastic rendezvous has completed .* on the wait list for the next round/,
      ),
    );
    // Answered as late, not left to its 20 s deadline.
    expect(late.report?.elapsedMs).toBeLessThan(20_000);
  });

  it('with --probe-secret-file, a stranger who computes the public token and claims rank 1 is turned away; the real rank 1 passes', async () => {
    const port = 29450;
    const dir = mkdtempSync(join(tmpdir(), 'ncr-secret-'));
    const secret = join(dir, 'probe-secret');
    writeFileSync(secret, 'a Kubernetes Secret, mounted on every pod\n');
    const rank = fixed(port, 2, '30s', 'node-a', ['--probe-secret-file', secret]);
    const master = check('a', rank(0));
    try {
      const stranger = await strangerAt('c', port, { rank: 1, address: DATA.b, port: 40_000 });
      expect(stranger).toEqual({ v: PROTOCOL_VERSION, kind: 'reject', reason: 'token' });
      const worker = await check('b', rank(1));
      const fromMaster = await master;
      for (const run of [fromMaster, worker]) {
        expect(run.code, JSON.stringify(run.error)).toBe(0);
        expect(run.logs.map((line) => line.msg)).toContainEqual(
          `probe membership: every node proves the job's shared secret (${secret}); a process without it is no member`,
        );
      }
      expect(probes(fromMaster)).toEqual([expect.objectContaining({ peer: 'node-b', ok: true })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A stranger on `host` that knows the job (node-a:PORT) registers a claim; the registry's first answer. */
  const strangerAt = async (
    host: Host,
    port: number,
    claim: { rank: number; address: string; port: number },
  ): Promise<unknown> => {
    const run = await lab.exec(
      host,
      'node',
      [
        ...['--input-type=module', '-e', STRANGER],
        JSON.stringify({ host: 'node-a', masterPort: port, ...claim }),
      ],
      { cwd: process.cwd(), timeout: 40_000 },
    );
    return JSON.parse(String(run.stdout));
  };
  /** The ephemeral port a node's check listens on at its data address, while it waits. */
  const listening = async (host: Host): Promise<number> => {
    let port = 0;
    await until(`${host}'s ephemeral listener`, async () => {
      const listing = await lab.exec(host, 'ss', ['-Htln', 'src', DATA[host]]);
      port = Number(String(listing.stdout).match(new RegExp(`${DATA[host]}:(\\d+)`))?.[1] ?? 0);
      return port !== 0;
    });
    return port;
  };

  it("without a secret, a stranger claiming node-b's address and port, or absent node-d's, is no member, and the check fails naming the rank it claimed", async () => {
    const port = 29460;
    const master = check('a', fixed(port, 3, '12s')(0));
    // Longer than the master's: at the master's deadline node-b is still there to be counted.
    const worker = check('b', fixed(port, 3, '20s')(1));
    await until('node-b registered', async () => (await held(port, 'b')) > 0);
    // node-b's own address and the port its check listens on: its service answers, under its key.
    const taken = await strangerAt('c', port, {
      rank: 2,
      address: DATA.b,
      port: await listening('b'),
    });
    expect(taken).toMatchObject({
      kind: 'reject',
      reason: expect.stringMatching(
        new RegExp(
          `^node-b \\(rank 2\\) registered from ${DATA.c} claiming ${DATA.b}:\\d+, where something else answers \\(a proof under another key\\): not a member`,
        ),
      ),
    });
    // node-d's address, where nothing of the job listens.
    const absent = await strangerAt('c', port, { rank: 2, address: DATA.d, port: 40_000 });
    expect(absent).toMatchObject({
      kind: 'reject',
      reason: expect.stringContaining(
        `registered from ${DATA.c} claiming ${DATA.d}:40000, which the master cannot reach to prove it (refused, ECONNREFUSED): not a member`,
      ),
    });
    const runs = await Promise.all([master, worker]);
    for (const run of runs) {
      expect(run.code, JSON.stringify(run.error)).toBe(75);
      expect(run.error?.message).toMatch(/rank 2 never registered: .* 2 of 3 nodes registered/);
    }
    const refused = runs[0].logs.filter((line) =>
      line.msg.startsWith('the probe registry refused'),
    );
    expect(refused).toHaveLength(2);
  });

  it('a node that registers from its management address (the name the master has there) is proven by dial-back and meshes on the data network', async () => {
    const port = 29470;
    const rank = fixed(port, 2, '30s', 'node-a-mgmt');
    const [master, worker] = await Promise.all([
      check('a', ['--log-level', 'debug', ...rank(0)]),
      check('b', rank(1)),
    ]);
    for (const run of [master, worker]) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      expect(probes(run)).toEqual([expect.objectContaining({ ok: true })]);
    }
    expect(probes(master)).toEqual([expect.objectContaining({ peer: 'node-b', address: DATA.b })]);
    expect(master.logs.map((line) => line.msg)).toContainEqual(
      `node-b registered from ${MGMT.b}, not its claimed ${DATA.b}: its probe service there proved the claim (the master's name resolves to another network, or a NAT lies between)`,
    );
  });

  it('a node whose firewall drops the dial-back is counted unproven, and the mesh names its ephemeral ports in seconds', async () => {
    const port = 29490;
    // Only the rendezvous port, and replies, come into node-b: its ephemeral listener is silent.
    const rules = [
      ['-p', 'tcp', '--dport', String(port), '-j', 'ACCEPT'],
      ['-m', 'state', '--state', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'],
      ['-p', 'tcp', '-j', 'DROP'],
    ];
    for (const rule of rules) await lab.exec('b', 'iptables', ['-A', 'INPUT', ...rule]);
    try {
      const rank = fixed(port, 2, '20s', 'node-a-mgmt');
      const [master, worker] = await Promise.all([check('a', rank(0)), check('b', rank(1))]);
      expect(master.logs.map((line) => line.msg)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^node-b \\(rank 1\\) registered from ${MGMT.b} claiming ${DATA.b}:\\d+, which did not answer the master's dial-back \\(no answer in 1s\\): counted unproven, for the mesh to check`,
          ),
        ),
      );
      expect([master.code, worker.code]).toEqual([75, 75]);
      expect(probes(master)).toEqual([
        expect.objectContaining({ peer: 'node-b', ok: false, error: 'ephemeral ports blocked' }),
      ]);
      // The mesh named the firewall before the 20 s deadline that silence alone would have reached.
      expect(master.report?.elapsedMs).toBeLessThan(20_000);
    } finally {
      await lab.exec('b', 'iptables', ['-F', 'INPUT']);
    }
  });

  it('a node behind a NAT is a member, proven by dial-back, and the mesh reports the NAT', async () => {
    const port = 29480;
    const rank = fixed(port, 2, '30s');
    const [master, natted] = await Promise.all([
      check('a', ['--log-level', 'debug', ...rank(0)]),
      check('e', rank(1)),
    ]);
    expect(master.logs.map((line) => line.msg)).toContainEqual(
      `node-e registered from ${ROUTER}, not its claimed ${BEHIND_NAT}: its probe service there proved the claim (the master's name resolves to another network, or a NAT lies between)`,
    );
    expect(master.logs.filter((line) => line.msg.startsWith('the probe registry refused'))).toEqual(
      [],
    );
    // node-e's dials leave as the router's address: what NCCL's bootstrap would trip over.
    expect(natted.code, JSON.stringify(natted.error)).toBe(75);
    expect(probes(natted)).toEqual([
      expect.objectContaining({ peer: 'node-a', ok: false, error: 'wrong source address' }),
    ]);
  });

  it("a worker whose check passes before the master's starts its launcher only once the master's registry has closed: torch's store client never reaches the probe", async () => {
    // node-c's first SYN to node-a's ephemeral port is dropped: its dial
    // connects with the retransmission a second later, and the master's
    // check waits for it, a second past node-b's (the ring is a → b → c → a;
    // nothing of b's legs or a's stream to b is held up), whose launcher
    // would start while the master's registry still answers.
    const port = 29495;
    const dir = mkdtempSync(join(tmpdir(), 'ncr-vj-store-'));
    const launcher = join(dir, 'store-client.mjs');
    writeFileSync(launcher, STORE_CLIENT, { mode: 0o755 });
    const worker = (host: Host, rank: number) =>
      lab.exec(
        host,
        'unshare',
        [
          ...['--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', `node-${host}`],
          // The shell entry: it execs the launcher on every Node.
          ...[join(dirname(CLI), 'nccl-run'), '--log-format', 'json', '--torchrun', launcher],
          ...fixed(port, 3, '30s')(rank),
        ],
        {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '' },
          extendEnv: false,
          reject: false,
          timeout: 60_000,
        },
      );
    const firstSyn = [
      ...['OUTPUT', '-d', DATA.a, '-p', 'tcp', '--syn', '--dport', '32768:60999'],
      ...['-m', 'statistic', '--mode', 'nth', '--every', '1000', '--packet', '0', '-j', 'DROP'],
    ];
    await lab.exec('c', 'iptables', ['-A', ...firstSyn]);
    const [master, ...workers] = await Promise.all([
      check('a', fixed(port, 3, '30s')(0)),
      worker('b', 1),
      worker('c', 2),
    ]).finally(async () => {
      await lab.exec('c', 'iptables', ['-D', ...firstSyn]);
      rmSync(dir, { recursive: true, force: true });
    });
    expect(master.code, JSON.stringify(master.error)).toBe(0);
    // The case itself: the dropped SYN held the master's check past the retransmission (the kernel's first RTO, 1 s).
    expect(master.report?.elapsedMs).toBeGreaterThanOrEqual(1_000);
    for (const run of workers) {
      expect(run.exitCode, String(run.stderr)).toBe(0);
      // Refused: the registry had closed, and nothing else holds the port (the master ran `check`).
      expect(String(run.stdout).trim()).toBe('ECONNREFUSED');
    }
  });

  it('two jobs with rank 0 on one host at adjacent master ports, and two jobs sharing a node at the default port, all pass', async () => {
    const job = (master: Host, port: number, nodes: Host[]) =>
      nodes.map((host, rank) =>
        check(host, fixed(port, nodes.length, '30s', `node-${master}`)(rank)),
      );
    // Neighbours: 29500 and 29501, both masters on node-a.
    const neighbours = await Promise.all([
      ...job('a', 29500, ['a', 'b']),
      ...job('a', 29501, ['a', 'c']),
    ]);
    for (const run of neighbours) expect(run.code, JSON.stringify(run.error)).toBe(0);
    // Sharing node-b: one job's worker, the other's master, both at 29500.
    const sharing = await Promise.all([
      ...job('a', 29500, ['a', 'b']),
      ...job('b', 29500, ['b', 'c']),
    ]);
    for (const run of sharing) expect(run.code, JSON.stringify(run.error)).toBe(0);
  });
});

/**
 * A process on another host that knows the job (master name and port, no
 * Slurm job id) and computes the public token as nccl-run does, then
 * registers as node-b with the rank, address and port it claims: it prints
 * the registry's first answer. Its argument: { host, masterPort, rank,
 * address, port }.
 */
const STRANGER = `
import { connect } from 'node:net';
import { jobToken } from './dist/membership/token.js';
import { encodeMessage } from './dist/probe/protocol.js';
const { host, masterPort, rank, address, port } = JSON.parse(process.argv[1]);
const token = jobToken({ master: { host, port: masterPort }, jobId: null, probePort: masterPort });
const request = encodeMessage({ kind: 'register', token, node: { name: 'node-b', rank }, interface: 'ens3f0',
  address, port, speedMbps: null, portRange: [32768, 60999], mtu: 1500, proofKey: '5'.repeat(32), munge: null });
for (let waited = 0; ; waited += 100) {
  const answer = await new Promise((resolve) => {
    const socket = connect({ host, port: masterPort }, () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => { text += chunk; if (text.includes('\\n')) { socket.destroy(); resolve(text.split('\\n')[0]); } });
    socket.on('error', () => resolve(null));
    socket.on('close', () => resolve(null));
  });
  if (answer !== null) { console.log(answer); break; }
  if (waited > 30000) throw new Error('no master');
  await new Promise((r) => setTimeout(r, 100));
}
`;

/**
 * The launcher of a worker in the hand-over test: dials the master's port at
 * once, as torch's TCPStore client would, and prints what it met there:
 * ECONNREFUSED, or `connected` (the probe registry still listening).
 */
const STORE_CLIENT = `#!/usr/bin/env node
import { connect } from 'node:net';
const arg = (name) => process.argv.find((a) => a.startsWith('--' + name + '='))?.split('=')[1];
const socket = connect({ host: arg('master_addr'), port: Number(arg('master_port')) });
socket.on('connect', () => { console.log('connected'); socket.destroy(); });
socket.on('error', (error) => console.log(error.code));
`;
