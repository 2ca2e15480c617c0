/**
 * `nccl-run check --verify peers` among network namespaces (SPEC
 * "Verification"; shared/LAB.md), through the built CLI on every node at
 * once (check-on-node.ts): nodes on two switches, a management network
 * their names resolve to and a data network. No peer list anywhere: the
 * nodes meet through the master's probe service. Then the data path broken
 * the ways NCCL meets it: a firewall that opens only the rendezvous ports,
 * a 50 Mbit/s link, a node that never comes, a masquerading router, and
 * strangers feeding the master's service garbage.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { type CheckRun, startCheck } from './check-on-node.js';
import { iptables } from './verify-lab.js';

const NODES = ['a', 'b', 'c'] as const;
type Node = (typeof NODES)[number] | 'd';
const MGMT = { a: '203.0.113.11', b: '203.0.113.12', c: '203.0.113.13', d: '203.0.113.14' };
const DATA = { a: '198.18.30.1', b: '198.18.30.2', c: '198.18.30.3', d: '198.18.30.4' };
const NAMES = { a: 'node-a', b: 'node-b', c: 'node-c', d: 'node-d' };
/** The cluster's DNS as most have it: every name on the management network. */
const HOSTS_FILE = `127.0.0.1 localhost\n${Object.entries(MGMT)
  .map(([node, address]) => `${address} node-${node}`)
  .join('\n')}\n`;
/** Every namespace's resolver: files first, then a DNS server that is its own loopback. */
const NSSWITCH = 'hosts: files dns\n';
const RESOLV = 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n';
const PORT_RANGE =
  /\(net\.ipv4\.ip_local_port_range (\d+)-(\d+) on node-c\); open TCP \1-\2 between the nodes on ens3f0/;

/** Every failing directed pair "from→to" that a set of reports names. */
function failingPairs(runs: Record<string, CheckRun>): string[] {
  const pairs = new Set<string>();
  for (const [self, run] of Object.entries(runs)) {
    for (const peer of run.report?.results ?? []) {
      if (peer.check !== 'probe') continue;
      if (peer.error !== null) pairs.add(`${self}→${peer.peer}`);
      if (peer.inbound && !peer.inbound.ok) pairs.add(`${peer.peer}→${self}`);
    }
  }
  return [...pairs].sort();
}

const probes = (run: CheckRun | undefined) =>
  run?.report?.results.filter((peer) => peer.check === 'probe') ?? [];

tier('verify peers, nodes on a management and a data switch', netnsUnavailable, () => {
  const lab = new Lab('vp');

  async function host(name: string): Promise<void> {
    await lab.host(name, HOSTS_FILE);
    writeFileSync(`/etc/netns/${lab.ns(name)}/nsswitch.conf`, NSSWITCH);
    writeFileSync(`/etc/netns/${lab.ns(name)}/resolv.conf`, RESOLV);
  }

  beforeAll(async () => {
    await lab.host('sw');
    for (const bridge of ['mgmt', 'data']) {
      await lab.ip('sw', 'link', 'add', bridge, 'type', 'bridge');
      await lab.ip('sw', 'link', 'set', bridge, 'up');
    }
    for (const node of [...NODES, 'd'] as const) {
      await host(node);
      for (const [iface, bridge, address] of [
        ['eno1', 'mgmt', MGMT[node]],
        ['ens3f0', 'data', DATA[node]],
      ] as const) {
        await lab.link(node, iface, 'sw', `${bridge[0]}-${node}`);
        await lab.ip('sw', 'link', 'set', `${bridge[0]}-${node}`, 'master', bridge);
        await lab.addr(node, iface, `${address}/24`);
      }
    }
  });

  afterEach(async () => {
    await lab.exec('c', 'iptables', ['-F', 'INPUT'], { reject: false, timeout: 10_000 });
    await lab.exec('b', 'tc', ['qdisc', 'del', 'dev', 'ens3f0', 'root'], { reject: false });
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  /** Every node at once, by torchrun's arguments: the master given by its management name. */
  const runAll = async (options: string[]): Promise<Record<string, CheckRun>> => {
    const runs = await Promise.all(
      NODES.map((node, rank) =>
        startCheck(lab, node, {
          hostname: NAMES[node],
          args: [
            '--verify',
            'peers',
            ...options,
            '--nnodes=3',
            `--node_rank=${rank}`,
            '--master_addr=node-a',
            '--master_port=29500',
            'train.py',
          ],
        }),
      ),
    );
    return Object.fromEntries(runs.map((run, index) => [NAMES[NODES[index] as Node], run]));
  };

  it('3 nodes with no peer list pass over the management network', async () => {
    const runs = await runAll(['--iface', 'eno1', '--verify-timeout', '15s']);
    for (const [self, run] of Object.entries(runs)) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      const node = self.slice(5) as Node;
      expect(
        probes(run)
          .map((peer) => peer.peer)
          .sort(),
      ).toEqual(Object.values(NAMES).filter((name) => name !== self && name !== 'node-d'));
      for (const peer of probes(run)) {
        expect(peer).toMatchObject({
          ok: true,
          address: MGMT[peer.peer.slice(5) as Node],
          seenSource: MGMT[node],
        });
      }
    }
    // node-a hosts the rendezvous, so it also checked that torchrun can bind 29500 there.
    expect(runs['node-a']?.report?.results.find((peer) => peer.check === 'bind')).toMatchObject({
      ok: true,
      address: MGMT.a,
      port: 29500,
    });
  });

  it('the management-hostname layout passes on the data network: peers are dialled at the addresses they registered', async () => {
    const runs = await runAll(['--iface', 'ens3f0', '--verify-timeout', '15s']);
    expect(failingPairs(runs)).toEqual([]);
    for (const [self, run] of Object.entries(runs)) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      const node = self.slice(5) as Node;
      for (const peer of probes(run)) {
        const other = peer.peer.slice(5) as Node;
        expect(peer).toMatchObject({ address: DATA[other], seenSource: DATA[node] });
        expect(peer.inbound?.source).toBe(DATA[other]);
      }
      // Each measured its throughput to the next node in rank order over the data net.
      const next = NAMES[NODES[(NODES.indexOf(node as (typeof NODES)[number]) + 1) % 3] as Node];
      expect(probes(run).find((peer) => peer.peer === next)?.bandwidthMbps).toBeGreaterThan(100);
    }
  });

  it('a firewall that opens only the rendezvous port fails with 75, naming the ephemeral range to open', async () => {
    // What a cluster's "allow the torchrun port" rule set looks like: the
    // store's port, where the probe meets too, and replies; nothing else comes in.
    const rules = [
      ['-p', 'tcp', '--dport', '29500', '-j', 'ACCEPT'],
      ['-m', 'state', '--state', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'],
      ['-p', 'tcp', '-j', 'DROP'],
    ];
    for (const rule of rules) await iptables(lab, 'c', '-A', 'INPUT', ...rule);
    const runs = await runAll(['--iface', 'ens3f0', '--verify-timeout', '30s']);
    for (const run of Object.values(runs)) expect(run.code).toBe(75);
    expect(failingPairs(runs)).toEqual(['node-a→node-c', 'node-b→node-c']);
    const fromA = runs['node-a'];
    expect(fromA?.error?.message).toMatch(
      /^verification failed via ens3f0 \(198\.18\.30\.1\): peer node-c at 198\.18\.30\.3:\d+: this node → node-c: ephemeral ports blocked \(no answer in [\d.]+s on its ephemeral port \d+ while its rendezvous port 29500 answers: NCCL listens on ephemeral ports/,
    );
    expect(fromA?.error?.message).toMatch(PORT_RANGE);
    // node-c itself says so too: it reached both, and neither reached it before its check ended.
    expect(runs['node-c']?.error?.details).toHaveLength(2);
    for (const detail of runs['node-c']?.error?.details ?? []) {
      expect(detail).toMatch(
        /→ this node: timed out \(did not reach 198\.18\.30\.3:\d+ before its own check ended, though this node reached its: a firewall here may let the rendezvous port through but not net\.ipv4\.ip_local_port_range \d+-\d+; open TCP \d+-\d+ on ens3f0\)$/,
      );
    }
    // The dialling nodes knew from their own attempts (two SYN retransmissions), not from the
    // 30 s timeout, which a check that waited for it would have passed (its deadline).
    for (const node of ['node-a', 'node-b'])
      expect(runs[node]?.report?.elapsedMs).toBeLessThan(30_000);
  });

  it('a 50 Mbit/s link fails --min-bandwidth 1gbit naming the slow pair and its figure, and passes a lower bound', async () => {
    // The link from node-b to node-c alone: what b sends to c passes a tbf
    // of 50 Mbit/s, everything else (the ACKs of node-a's stream to b among
    // it) the default class. One shaper on b's whole egress would slow
    // node-a → node-b too, its ACKs queued behind the stream to c.
    const tc = (...args: string[]) => lab.exec('b', 'tc', ['qdisc', ...args]);
    const dev = ['dev', 'ens3f0'];
    await tc('add', ...dev, 'root', 'handle', '1:', 'htb', 'default', '10');
    for (const classid of ['1:10', '1:20']) {
      await lab.exec('b', 'tc', [
        'class',
        'add',
        ...dev,
        'parent',
        '1:',
        'classid',
        classid,
        'htb',
        'rate',
        '10gbit',
      ]);
    }
    await tc(
      'add',
      ...dev,
      'parent',
      '1:20',
      'tbf',
      'rate',
      '50mbit',
      'burst',
      '64kb',
      'latency',
      '100ms',
    );
    const toC = ['u32', 'match', 'ip', 'dst', `${DATA.c}/32`, 'flowid', '1:20'];
    await lab.exec('b', 'tc', ['filter', 'add', ...dev, 'parent', '1:', 'protocol', 'ip', ...toC]);

    const strict = await runAll([
      '--iface',
      'ens3f0',
      '--verify-timeout',
      '15s',
      '--min-bandwidth',
      '1gbit',
    ]);
    // Both ends of the slow pair fail, each naming it and its figure; node-a's pairs are fast.
    expect(
      [strict['node-a']?.code, strict['node-b']?.code, strict['node-c']?.code],
      JSON.stringify(strict['node-a']?.error),
    ).toEqual([0, 75, 75]);
    expect(failingPairs(strict)).toEqual(['node-b→node-c']);
    const figure = /node-b → node-c measured ([\d.]+) Mbit\/s, below --min-bandwidth 1 Gbit\/s/;
    expect(strict['node-b']?.error?.message).toMatch(
      new RegExp(
        `: peer node-c at [\\d.:]+: this node → node-c: below the bandwidth \\(${figure.source}\\)$`,
      ),
    );
    expect(strict['node-c']?.error?.message).toMatch(
      new RegExp(
        `: peer node-b at [\\d.:]+: node-b → this node: below the bandwidth \\(${figure.source}\\)$`,
      ),
    );
    const measured = Number(strict['node-b']?.error?.message.match(figure)?.[1]);
    expect(measured).toBeGreaterThan(25);
    expect(measured).toBeLessThan(75);

    const lenient = await runAll([
      '--iface',
      'ens3f0',
      '--verify-timeout',
      '15s',
      '--min-bandwidth',
      '10mbit',
    ]);
    for (const run of Object.values(lenient)) expect(run.code, JSON.stringify(run.error)).toBe(0);
    // check --json carries the figure (SPEC "Outputs": bandwidthMbps).
    const bToC = probes(lenient['node-b']).find((peer) => peer.peer === 'node-c');
    expect(bToC?.bandwidthMbps).toBeGreaterThan(25);
    expect(bToC?.bandwidthMbps).toBeLessThan(75);
  });

  it('a node that never comes gives 75 on every node that did, naming it by its Slurm name', async () => {
    // Slurm's view of a 4-node step: the master, its port and each rank come from it.
    const slurm = (rank: number, node: Node) => ({
      SLURM_JOB_ID: '7002',
      SLURM_STEP_NODELIST: 'node-a,node-b,node-c,node-d',
      SLURM_STEP_NUM_NODES: '4',
      SLURM_NODEID: String(rank),
      SLURMD_NODENAME: NAMES[node],
    });
    const runs = await Promise.all(
      NODES.map((node, rank) =>
        startCheck(lab, node, {
          hostname: NAMES[node],
          args: ['--iface', 'ens3f0', '--verify', 'peers', '--verify-timeout', '2s', 'train.py'],
          env: slurm(rank, node),
        }),
      ),
    );
    // Port 15000 + 2 * (7002 mod 7000), where the probe meets too (SPEC "Cluster fill-in", --probe-port).
    for (const run of runs) {
      expect(run.code, JSON.stringify(run.error)).toBe(75);
      expect(run.error?.message).toMatch(
        /^verification failed via ens3f0 \(198\.18\.30\.\d\): node-d never registered: did not register with the master's probe service \(node-a at 203\.0\.113\.11:15004\) in 2s; 3 of 4 nodes registered$/,
      );
      expect(run.report?.results.filter((peer) => peer.check !== 'bind')).toEqual([
        expect.objectContaining({ peer: 'node-d', check: 'register', error: 'not registered' }),
      ]);
    }
  });

  it("the master's service completes although strangers feed it garbage, an overlong line and idle connections", async () => {
    const pair = (rank: number) => [
      '--iface',
      'ens3f0',
      '--verify',
      'peers',
      '--verify-timeout',
      '25s',
      '--nnodes=2',
      `--node_rank=${rank}`,
      '--master_addr=node-a',
      '--master_port=29600',
      'train.py',
    ];
    const master = startCheck(lab, 'a', { hostname: 'node-a', args: pair(0) });
    // The abuser waits (bounded) for the master's service to listen: up to 25 s, since a
    // loaded 2-core machine once took over 10 s to start the master's check.
    const abuse = await lab.exec('c', 'node', ['-e', ABUSER, MGMT.a, '29600'], { timeout: 40_000 });
    const seen = JSON.parse(String(abuse.stdout)) as Record<
      string,
      { answer: string; closedAfterMs: number }[]
    >;
    for (const kind of ['garbage', 'overlong', 'idle'] as const) {
      expect(seen[kind]?.length).toBeGreaterThan(0);
      for (const connection of seen[kind] ?? []) expect(connection.answer).toBe('');
    }
    // Silence costs a connection after the service's first-line limit (3s), not before.
    for (const connection of seen.idle ?? []) {
      expect(connection.closedAfterMs).toBeGreaterThanOrEqual(2_500);
    }
    const worker = await startCheck(lab, 'b', { hostname: 'node-b', args: pair(1) });
    const fromMaster = await master;
    expect([fromMaster.code, worker.code]).toEqual([0, 0]);
    expect(probes(fromMaster)).toEqual([expect.objectContaining({ peer: 'node-b', ok: true })]);
  });

  it("700 idle and trickling strangers at the master, 300 at a node's ephemeral port: every member passes, none blamed as a firewall", async () => {
    const args = (rank: number) => [
      '--iface',
      'ens3f0',
      '--verify',
      'peers',
      '--verify-timeout',
      '40s',
      '--nnodes=3',
      `--node_rank=${rank}`,
      '--master_addr=node-a',
      '--master_port=29700',
      'train.py',
    ];
    const a = startCheck(lab, 'a', { hostname: 'node-a', args: args(0), timeoutMs: 90_000 });
    const b = startCheck(lab, 'b', { hostname: 'node-b', args: args(1), timeoutMs: 90_000 });
    // node-b's ephemeral port, as a stranger on its network would find it by scanning.
    const ephemeral = await waitFor(async () => {
      const listing = await lab.exec('b', 'ss', ['-Htln', 'src', DATA.b], { reject: false });
      return String(listing.stdout).match(/198\.18\.30\.2:(\d+)/)?.[1] ?? null;
    }, 30_000);
    const abuser = lab.exec('d', 'node', ['-e', CROWD, MGMT.a, '29700', DATA.b, ephemeral], {
      timeout: 120_000,
      reject: false,
    });
    // Every stranger's connection open before the last member starts.
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('the crowd never stood up')), 40_000);
      abuser.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(guard);
          resolve();
        }
      });
    });
    const c = await startCheck(lab, 'c', { hostname: 'node-c', args: args(2), timeoutMs: 90_000 });
    const runs = { 'node-a': await a, 'node-b': await b, 'node-c': c };
    abuser.stdin?.end();
    const crowd = JSON.parse(
      String((await abuser).stdout)
        .split('\n')
        .at(-1) ?? '{}',
    ) as {
      opened: number;
      closedByService: number;
    };
    for (const run of Object.values(runs)) expect(run.code, JSON.stringify(run.error)).toBe(0);
    expect(failingPairs(runs)).toEqual([]);
    // The crowd was real: a thousand connections and more, each dropped by the services in time.
    expect(crowd.opened).toBeGreaterThanOrEqual(1_000);
    expect(crowd.closedByService).toBeGreaterThan(0);
  });
});

/** Polls `probe` (bounded) until it gives a value. */
async function waitFor<T>(probe: () => Promise<T | null>, limitMs: number): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (performance.now() - started > limitMs) throw new Error(`nothing after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits (bounded) for the service, then opens connections that send
 * garbage, an 8 KiB line without a newline, or nothing at all, and reports
 * for each what the service answered and when it hung up.
 */
const ABUSER = `
const net = require('node:net');
const [host, port] = process.argv.slice(1);
const open = (payload) => new Promise((resolve, reject) => {
  const started = Date.now();
  const socket = net.connect({ host, port: Number(port) });
  let answer = '';
  socket.on('connect', () => { if (payload) socket.write(payload); });
  socket.on('data', (chunk) => { answer += chunk; });
  socket.on('error', reject);
  socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
  setTimeout(() => reject(new Error('still open after 8s')), 8000).unref();
});
(async () => {
  for (let waited = 0; ; waited += 100) {
    try { await new Promise((ok, fail) => net.connect({ host, port: Number(port) }, function () { this.destroy(); ok(); }).on('error', fail)); break; }
    catch (error) { if (waited > 25000) throw error; await new Promise((r) => setTimeout(r, 100)); }
  }
  const [garbage, overlong, idle] = await Promise.all([
    Promise.all([open('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'), open(Buffer.from([0, 255, 10, 13, 0]))]),
    Promise.all([open('x'.repeat(8192))]),
    Promise.all(Array.from({ length: 10 }, () => open(null))),
  ]);
  console.log(JSON.stringify({ garbage, overlong, idle }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

/**
 * The issue's crowd, bounded: 700 idle connections and 5 that trickle a
 * byte every 2 s at the master's port, 300 idle ones at a node's ephemeral
 * port; each one the service drops is opened again after a second, until
 * stdin closes or 60 s pass. Says "ready" once all are open, and at the end
 * how many it opened and how many the services closed.
 */
const CROWD = `
const net = require('node:net');
const [masterHost, masterPort, nodeHost, nodePort] = process.argv.slice(1);
let opened = 0, closedByService = 0, stopping = false;
const keep = (host, port, trickle) => new Promise((resolve) => {
  const socket = net.connect({ host, port: Number(port) });
  let timer = null;
  socket.on('connect', () => {
    opened += 1;
    resolve();
    if (trickle) timer = setInterval(() => socket.write('{'), 2000);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    clearInterval(timer);
    if (stopping) return;
    closedByService += 1;
    setTimeout(() => keep(host, port, trickle), 1000).unref();
  });
  sockets.add(socket);
});
const sockets = new Set();
const stop = () => {
  stopping = true;
  for (const socket of sockets) socket.destroy();
  console.log(JSON.stringify({ opened, closedByService }));
  process.exit(0);
};
(async () => {
  for (let waited = 0; ; waited += 100) {
    try { await new Promise((ok, fail) => net.connect({ host: masterHost, port: Number(masterPort) }, function () { this.destroy(); ok(); }).on('error', fail)); break; }
    catch (error) { if (waited > 25000) throw error; await new Promise((r) => setTimeout(r, 100)); }
  }
  await Promise.all([
    ...Array.from({ length: 700 }, () => keep(masterHost, masterPort, false)),
    ...Array.from({ length: 5 }, () => keep(masterHost, masterPort, true)),
    ...Array.from({ length: 300 }, () => keep(nodeHost, nodePort, false)),
  ]);
  console.log('ready');
  process.stdin.on('end', stop).resume();
  setTimeout(stop, 60000);
})().catch((error) => { console.error(error); process.exit(1); });
`;

/**
 * Two nodes, x on 198.18.N.0/24 and y on 198.18.N+1.0/24, and a router r
 * between them that forwards: x's ens3f0 to r's left, r's right to y's ens3f0.
 */
function routedPair(n: number) {
  return { X: `198.18.${n}.1`, Y: `198.18.${n + 1}.1`, ROUTER_RIGHT: `198.18.${n + 1}.254` };
}

async function buildRoutedPair(lab: Lab, n: number): Promise<void> {
  const { X, Y, ROUTER_RIGHT } = routedPair(n);
  const routerLeft = `198.18.${n}.254`;
  for (const host of ['x', 'r', 'y']) await lab.host(host);
  await lab.link('x', 'ens3f0', 'r', 'left');
  await lab.link('r', 'right', 'y', 'ens3f0');
  await lab.addr('x', 'ens3f0', `${X}/24`);
  await lab.addr('r', 'left', `${routerLeft}/24`);
  await lab.addr('r', 'right', `${ROUTER_RIGHT}/24`);
  await lab.addr('y', 'ens3f0', `${Y}/24`);
  await lab.ip('x', 'route', 'add', `198.18.${n + 1}.0/24`, 'via', routerLeft);
  await lab.ip('y', 'route', 'add', `198.18.${n}.0/24`, 'via', ROUTER_RIGHT);
  await lab.exec('r', 'sysctl', ['-qw', 'net.ipv4.ip_forward=1'], { timeout: 10_000 });
}

tier('verify peers through a masquerading router', netnsUnavailable, () => {
  const lab = new Lab('vn');
  const { X, Y, ROUTER_RIGHT } = routedPair(40);

  beforeAll(async () => {
    await buildRoutedPair(lab, 40);
    // Only traffic leaving towards y is rewritten: x → y arrives from the router's address.
    await iptables(lab, 'r', '-t', 'nat', '-A', 'POSTROUTING', '-o', 'right', '-j', 'MASQUERADE');
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  it('flags the NATed direction as wrong source address on both ends, and only that one', async () => {
    const args = (rank: number) => [
      '--iface',
      'ens3f0',
      '--verify',
      'peers',
      '--verify-timeout',
      '10s',
      '--nnodes=2',
      `--node_rank=${rank}`,
      `--master_addr=${X}`,
      '--master_port=29500',
      'train.py',
    ];
    const [fromX, fromY] = await Promise.all([
      startCheck(lab, 'x', { hostname: 'x', args: args(0) }),
      startCheck(lab, 'y', { hostname: 'y', args: args(1) }),
    ]);
    expect([fromX.code, fromY.code]).toEqual([75, 75]);
    expect(probes(fromX)).toEqual([
      expect.objectContaining({
        peer: 'y',
        address: Y,
        ok: false,
        error: 'wrong source address',
        seenSource: ROUTER_RIGHT,
        detail: `it saw ${ROUTER_RIGHT}, we sent from ${X}`,
        inbound: expect.objectContaining({ ok: true, error: null, source: Y }),
      }),
    ]);
    expect(fromX.error?.message).toMatch(
      new RegExp(
        `^verification failed via ens3f0 \\(${X}\\): peer y at ${Y}:\\d+: this node → y: wrong source address \\(it saw ${ROUTER_RIGHT}, we sent from ${X}\\)$`,
      ),
    );
    expect(probes(fromY)).toEqual([
      expect.objectContaining({
        peer: 'x',
        ok: false,
        error: null,
        seenSource: Y,
        inbound: expect.objectContaining({
          ok: false,
          error: 'wrong source address',
          detail: `saw ${ROUTER_RIGHT}, it sends from ${X}`,
          source: ROUTER_RIGHT,
        }),
      }),
    ]);
    // Both legs settled early: the check ends when all are done, not at its 10 s deadline.
    expect(fromX.report?.elapsedMs).toBeLessThan(10_000);
  });
});

/**
 * SPEC "Readiness": a hop whose MTU is smaller than the nodes', with the
 * ICMP that would shrink TCP's segments dropped (a real black hole: the
 * router's "fragmentation needed" blocked by iptables, and a veth that
 * drops what exceeds its MTU). Small messages pass, so the registration and
 * the hellos do; the throughput sample's full-size segments do not.
 */
tier('verify peers across an MTU black hole', netnsUnavailable, () => {
  const lab = new Lab('vm');
  const { X } = routedPair(42);

  beforeAll(async () => {
    await buildRoutedPair(lab, 42);
    // The router's own "fragmentation needed" never leaves it: path-MTU discovery fails.
    await iptables(
      lab,
      'r',
      '-A',
      'OUTPUT',
      '-p',
      'icmp',
      '--icmp-type',
      'fragmentation-needed',
      '-j',
      'DROP',
    );
    // Jumbo frames on the nodes and the router's left side; its right side carries 1500.
    await lab.ip('x', 'link', 'set', 'ens3f0', 'mtu', '9000');
    await lab.ip('r', 'link', 'set', 'left', 'mtu', '9000');
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  const args = (rank: number) => [
    '--iface',
    'ens3f0',
    '--verify',
    'peers',
    '--verify-timeout',
    '10s',
    '--nnodes=2',
    `--node_rank=${rank}`,
    `--master_addr=${X}`,
    '--master_port=29500',
    'train.py',
  ];

  it('nodes at 9000 across a hop of 1500: the small exchange passes, the stream does not, and both ends name a likely MTU black hole', async () => {
    await lab.ip('y', 'link', 'set', 'ens3f0', 'mtu', '9000');
    const [fromX, fromY] = await Promise.all([
      startCheck(lab, 'x', { hostname: 'x', args: args(0) }),
      startCheck(lab, 'y', { hostname: 'y', args: args(1) }),
    ]);
    expect([fromX.code, fromY.code]).toEqual([75, 75]);
    // The hellos crossed: what failed is x's large frames towards y, which the
    // router would have to fragment; y's come back whole (the veth passes them).
    expect(probes(fromX)).toEqual([
      expect.objectContaining({
        peer: 'y',
        ok: false,
        error: 'large frames dropped',
        detail: expect.stringMatching(
          /^y got the stream's first line but none of the full-size segments that followed in 1.1s: .*\(x's 9000, y's 9000\).*MTU black hole/,
        ),
        inbound: expect.objectContaining({ ok: true }),
      }),
    ]);
    expect(probes(fromY)).toEqual([
      expect.objectContaining({
        peer: 'x',
        error: null,
        inbound: expect.objectContaining({ ok: false, error: 'large frames dropped' }),
      }),
    ]);
    // The same MTU on both nodes: nothing to compare, and no mismatch named.
    expect(fromX.report?.warnings.join('\n')).not.toMatch(/^mtu:/m);
  });

  it('a node at 1500 and one at 9000: the mismatch is named with both values, and the direction that needs the smaller frames passes', async () => {
    await lab.ip('y', 'link', 'set', 'ens3f0', 'mtu', '1500');
    const [fromX, fromY] = await Promise.all([
      startCheck(lab, 'x', { hostname: 'x', args: args(0) }),
      startCheck(lab, 'y', { hostname: 'y', args: args(1) }),
    ]);
    expect(fromX.report?.warnings).toContainEqual(
      expect.stringMatching(
        /^mtu: ens3f0 has MTU 9000, but y has 1500: frames above 1500 may be dropped.*; fix: .*ip link set dev ens3f0 mtu 1500/,
      ),
    );
    expect(fromY.report?.warnings).toContainEqual(
      expect.stringMatching(/^mtu: ens3f0 has MTU 1500, but x has 9000/),
    );
    // TCP's MSS is the smaller end's both ways (y advertises 1460), so here no frame is too large.
    expect([fromX.code, fromY.code]).toEqual([0, 0]);
  });
});
