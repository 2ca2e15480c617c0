/**
 * `--verify peers` among network namespaces (SPEC "Verification"; shared/LAB.md):
 * nodes on two switches, a management network their names resolve to and
 * a data network, each running verify() at once. No peer list anywhere:
 * the nodes meet through the master's probe service. Then the data path
 * broken the ways NCCL meets it: a firewall that opens only the rendezvous
 * ports, a 50 Mbit/s link, a node that never comes, a masquerading router,
 * and strangers feeding the master's service garbage.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import type { RunnerArgs, RunnerResult } from './verify-lab.js';
import { iptables, runVerify, startVerify } from './verify-lab.js';

const NODES = ['a', 'b', 'c'] as const;
type Node = (typeof NODES)[number] | 'd';
const MGMT = { a: '203.0.113.11', b: '203.0.113.12', c: '203.0.113.13', d: '203.0.113.14' };
const DATA = { a: '198.18.30.1', b: '198.18.30.2', c: '198.18.30.3', d: '198.18.30.4' };
const NAMES = { a: 'node-a', b: 'node-b', c: 'node-c', d: 'node-d' };
/** The cluster's DNS as most have it: every name on the management network. */
const HOSTS_FILE = `127.0.0.1 localhost\n${Object.entries(MGMT)
  .map(([node, address]) => `${address} node-${node}`)
  .join('\n')}\n`;
const PORT_RANGE =
  /\(net\.ipv4\.ip_local_port_range (\d+)-(\d+) on node-c\); open TCP \1-\2 between the nodes on ens3f0/;

/** Every failing directed pair "from→to" that a set of reports names. */
function failingPairs(reports: Record<string, RunnerResult>): string[] {
  const pairs = new Set<string>();
  for (const [self, result] of Object.entries(reports)) {
    for (const peer of result.report?.results ?? []) {
      if (peer.check !== 'probe') continue;
      if (peer.error !== null) pairs.add(`${self}→${peer.peer}`);
      if (peer.inbound && !peer.inbound.ok) pairs.add(`${peer.peer}→${self}`);
    }
  }
  return [...pairs].sort();
}

tier('verify peers, nodes on a management and a data switch', netnsUnavailable, () => {
  const lab = new Lab('vp');

  beforeAll(async () => {
    await lab.host('sw');
    for (const bridge of ['mgmt', 'data']) {
      await lab.ip('sw', 'link', 'add', bridge, 'type', 'bridge');
      await lab.ip('sw', 'link', 'set', bridge, 'up');
    }
    for (const node of [...NODES, 'd'] as const) {
      await lab.host(node, HOSTS_FILE);
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

  /** Every node at once: the master named by its management name, as Slurm names it. */
  const runAll = async (
    args: Partial<RunnerArgs>,
    nodes: readonly Node[] = NODES,
  ): Promise<Record<string, RunnerResult>> => {
    const results = await Promise.all(
      nodes.map((node, rank) =>
        runVerify(lab, node, {
          level: 'peers',
          iface: 'ens3f0',
          master: { host: 'node-a', port: 29500 },
          nodeRank: rank,
          nnodes: nodes.length,
          nodeName: NAMES[node],
          timeoutMs: 15_000,
          jobId: '7001',
          bandwidthWindowMs: 500,
          ...args,
        }),
      ),
    );
    return Object.fromEntries(
      results.map((result, index) => [NAMES[nodes[index] as Node], result]),
    );
  };

  it('3 nodes with no peer list pass over the management network', async () => {
    const reports = await runAll({ iface: 'eno1' });
    for (const [self, result] of Object.entries(reports)) {
      expect(result.code, JSON.stringify(result.error)).toBe(0);
      const probes = result.report?.results.filter((peer) => peer.check === 'probe') ?? [];
      const node = self.slice(5) as Node;
      expect(probes.map((peer) => peer.peer).sort()).toEqual(
        Object.values(NAMES).filter((name) => name !== self && name !== 'node-d'),
      );
      for (const peer of probes) {
        expect(peer).toMatchObject({
          ok: true,
          address: MGMT[peer.peer.slice(5) as Node],
          seenSource: MGMT[node],
        });
      }
    }
    // node-a hosts the rendezvous, so it also checked that torchrun can bind 29500 there.
    expect(reports['node-a']?.report?.results.find((peer) => peer.check === 'bind')).toMatchObject({
      ok: true,
      address: MGMT.a,
      port: 29500,
    });
  });

  it('the management-hostname layout passes on the data network: peers are dialled at the addresses they registered', async () => {
    const reports = await runAll({});
    expect(failingPairs(reports)).toEqual([]);
    for (const [self, result] of Object.entries(reports)) {
      expect(result.code, JSON.stringify(result.error)).toBe(0);
      const node = self.slice(5) as Node;
      for (const peer of result.report?.results.filter((p) => p.check === 'probe') ?? []) {
        const other = peer.peer.slice(5) as Node;
        expect(peer).toMatchObject({ address: DATA[other], seenSource: DATA[node] });
        expect(peer.inbound?.source).toBe(DATA[other]);
      }
      // Each measured its throughput to the next node in rank order over the data net.
      const next = NAMES[NODES[(NODES.indexOf(node as (typeof NODES)[number]) + 1) % 3] as Node];
      expect(
        result.report?.results.find((peer) => peer.peer === next)?.bandwidthMbps,
      ).toBeGreaterThan(100);
    }
  });

  it('a firewall that opens only the rendezvous ports fails with 75, naming the ephemeral range to open', async () => {
    // What a cluster's "allow the torchrun ports" rule set looks like: the
    // store's and the probe's port, and replies; nothing else comes in.
    await iptables(
      lab,
      'c',
      '-A',
      'INPUT',
      '-p',
      'tcp',
      '-m',
      'multiport',
      '--dports',
      '29500,29501',
      '-j',
      'ACCEPT',
    );
    await iptables(
      lab,
      'c',
      '-A',
      'INPUT',
      '-m',
      'state',
      '--state',
      'ESTABLISHED,RELATED',
      '-j',
      'ACCEPT',
    );
    await iptables(lab, 'c', '-A', 'INPUT', '-p', 'tcp', '-j', 'DROP');
    const reports = await runAll({ timeoutMs: 5_000 });
    for (const result of Object.values(reports)) expect(result.code).toBe(75);
    expect(failingPairs(reports)).toEqual(['node-a→node-c', 'node-b→node-c']);
    const fromA = reports['node-a'];
    expect(fromA?.error?.message).toMatch(
      /^verification failed via ens3f0 \(198\.18\.30\.1\): peer node-c at 198\.18\.30\.3:\d+: this node → node-c: ephemeral ports blocked \(no answer in [\d.]+s on its ephemeral port \d+ while its probe port 29501 answers: NCCL listens on ephemeral ports/,
    );
    expect(fromA?.error?.message).toMatch(PORT_RANGE);
    // node-c itself says so too: its probe port was reached, its ephemeral port was not.
    for (const detail of reports['node-c']?.error?.details ?? []) {
      expect(detail).toMatch(
        /→ this node: ephemeral ports blocked \(it reached this node's probe port 29501 but not its ephemeral port 198\.18\.30\.3:\d+: a firewall here lets the rendezvous ports through but not net\.ipv4\.ip_local_port_range \d+-\d+; open TCP \d+-\d+ on ens3f0\)$/,
      );
    }
    expect(reports['node-c']?.error?.details).toHaveLength(2);
    // A and B knew after two SYN retransmissions, not at the timeout.
    expect(fromA?.elapsedMs).toBeLessThan(5_000);
  });

  it('a 50 Mbit/s link fails --min-bandwidth 1gbit naming the slow pair and its figure, and passes a lower bound', async () => {
    await lab.exec('b', 'tc', [
      'qdisc',
      'add',
      'dev',
      'ens3f0',
      'root',
      'tbf',
      'rate',
      '50mbit',
      'burst',
      '64kb',
      'latency',
      '100ms',
    ]);
    const strict = await runAll({ minBandwidthMbps: 1_000 });
    // Both ends of the slow pair fail, each naming it and its figure. (The
    // shaper delays node-b's ACKs too, so node-a → node-b may fall short as
    // well: a shaped NIC slows TCP both ways, as it would NCCL's.)
    expect([strict['node-b']?.code, strict['node-c']?.code]).toEqual([75, 75]);
    const figure = /node-b → node-c measured ([\d.]+) Mbit\/s, below --min-bandwidth 1 Gbit\/s/;
    expect(strict['node-b']?.error?.message).toMatch(
      new RegExp(
        `: peer node-c at [\\d.:]+: this node → node-c: below the bandwidth \\(${figure.source}\\)`,
      ),
    );
    expect(strict['node-c']?.error?.details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`node-b → this node: below the bandwidth \\(${figure.source}\\)`),
        ),
      ]),
    );
    const measured = Number(strict['node-b']?.error?.message.match(figure)?.[1]);
    expect(measured).toBeGreaterThan(25);
    expect(measured).toBeLessThan(75);

    const lenient = await runAll({ minBandwidthMbps: 10 });
    for (const result of Object.values(lenient))
      expect(result.code, JSON.stringify(result.error)).toBe(0);
    const toC = lenient['node-b']?.report?.results.find((peer) => peer.peer === 'node-c');
    expect(toC?.bandwidthMbps).toBeGreaterThan(25);
    expect(toC?.bandwidthMbps).toBeLessThan(75);
  });

  it('a node that never comes gives 75 on every node that did, naming it', async () => {
    const nodeList = Object.values(NAMES);
    const three = await Promise.all(
      NODES.map((node, rank) =>
        runVerify(lab, node, {
          level: 'peers',
          iface: 'ens3f0',
          master: { host: 'node-a', port: 29500 },
          nodeRank: rank,
          nnodes: 4,
          nodeName: NAMES[node],
          nodeList,
          timeoutMs: 3_000,
          jobId: '7002',
        }),
      ),
    );
    for (const result of three) {
      expect(result.code).toBe(75);
      expect(result.error?.message).toMatch(
        /^verification failed via ens3f0 \(198\.18\.30\.\d\): node-d never registered: did not register with the master's probe service \(node-a at 203\.0\.113\.11:29501\) in 3s; 3 of 4 nodes registered$/,
      );
      expect(result.report?.results.filter((peer) => peer.check !== 'bind')).toEqual([
        expect.objectContaining({ peer: 'node-d', check: 'register', error: 'not registered' }),
      ]);
    }
  });

  it("the master's service completes although strangers feed it garbage, an overlong line and idle connections", async () => {
    const master = startVerify(lab, 'a', {
      level: 'peers',
      iface: 'ens3f0',
      master: { host: 'node-a', port: 29600 },
      nodeRank: 0,
      nnodes: 2,
      nodeName: 'node-a',
      timeoutMs: 25_000,
      bandwidthWindowMs: 200,
    });
    await master.started;
    const abuse = await lab.exec('c', 'node', ['-e', ABUSER, MGMT.a, '29601'], { timeout: 20_000 });
    const seen = JSON.parse(String(abuse.stdout)) as Record<
      string,
      { answer: string; closedAfterMs: number }[]
    >;
    for (const kind of ['garbage', 'overlong', 'idle'] as const) {
      expect(seen[kind]?.length).toBeGreaterThan(0);
      for (const connection of seen[kind] ?? []) expect(connection.answer).toBe('');
    }
    // Silence costs a connection after the service's idle limit (3s), not before.
    for (const connection of seen.idle ?? [])
      expect(connection.closedAfterMs).toBeGreaterThanOrEqual(2_500);
    const worker = await runVerify(lab, 'b', {
      level: 'peers',
      iface: 'ens3f0',
      master: { host: 'node-a', port: 29600 },
      nodeRank: 1,
      nnodes: 2,
      nodeName: 'node-b',
      timeoutMs: 15_000,
      bandwidthWindowMs: 200,
    });
    const fromMaster = await master.done;
    expect([fromMaster.code, worker.code]).toEqual([0, 0]);
    expect(fromMaster.report?.results.filter((peer) => peer.check === 'probe')).toEqual([
      expect.objectContaining({ peer: 'node-b', ok: true }),
    ]);
  });
});

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
    catch (error) { if (waited > 10000) throw error; await new Promise((r) => setTimeout(r, 100)); }
  }
  const [garbage, overlong, idle] = await Promise.all([
    Promise.all([open('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'), open(Buffer.from([0, 255, 10, 13, 0]))]),
    Promise.all([open('x'.repeat(8192))]),
    Promise.all(Array.from({ length: 10 }, () => open(null))),
  ]);
  console.log(JSON.stringify({ garbage, overlong, idle }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe.skipIf(netnsUnavailable !== null)('verify peers through a masquerading router', () => {
  const lab = new Lab('vn');
  const X = '198.18.40.1';
  const Y = '198.18.41.1';
  const ROUTER_RIGHT = '198.18.41.254';

  beforeAll(async () => {
    for (const host of ['x', 'r', 'y']) await lab.host(host);
    await lab.link('x', 'ens3f0', 'r', 'left');
    await lab.link('r', 'right', 'y', 'ens3f0');
    await lab.addr('x', 'ens3f0', `${X}/24`);
    await lab.addr('r', 'left', '198.18.40.254/24');
    await lab.addr('r', 'right', `${ROUTER_RIGHT}/24`);
    await lab.addr('y', 'ens3f0', `${Y}/24`);
    await lab.ip('x', 'route', 'add', '198.18.41.0/24', 'via', '198.18.40.254');
    await lab.ip('y', 'route', 'add', '198.18.40.0/24', 'via', ROUTER_RIGHT);
    await lab.exec('r', 'sysctl', ['-qw', 'net.ipv4.ip_forward=1'], { timeout: 10_000 });
    // Only traffic leaving towards y is rewritten: x → y arrives from the router's address.
    await iptables(lab, 'r', '-t', 'nat', '-A', 'POSTROUTING', '-o', 'right', '-j', 'MASQUERADE');
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  it('flags the NATed direction as wrong source address on both ends, and only that one', async () => {
    const args = (nodeRank: number, nodeName: string) => ({
      level: 'peers' as const,
      iface: 'ens3f0',
      master: { host: X, port: 29500 },
      nodeRank,
      nnodes: 2,
      nodeName,
      timeoutMs: 10_000,
      bandwidthWindowMs: 200,
    });
    const [fromX, fromY] = await Promise.all([
      runVerify(lab, 'x', args(0, 'x')),
      runVerify(lab, 'y', args(1, 'y')),
    ]);
    expect([fromX.code, fromY.code]).toEqual([75, 75]);
    expect(fromX.report?.results.filter((peer) => peer.check === 'probe')).toEqual([
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
    expect(fromY.report?.results.filter((peer) => peer.check === 'probe')).toEqual([
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
    // Both legs settled early: the check ends when all are done, not at the timeout.
    expect(fromX.elapsedMs).toBeLessThan(8_000);
  });
});
