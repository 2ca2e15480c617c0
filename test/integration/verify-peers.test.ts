/**
 * `--verify peers` among network namespaces (SPEC "Verification"; shared/LAB.md):
 * three nodes on one switch that all pass, then one node's probe port
 * firewalled (the report names exactly the failing pairs); two nodes whose
 * path masquerades (NAT is flagged); and a listener that strangers feed
 * garbage, an overlong line and idle connections, which still completes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import type { RunnerResult } from './verify-lab.js';
import { iptables, runVerify, startVerify } from './verify-lab.js';

const NODES = { a: '198.18.30.1', b: '198.18.30.2', c: '198.18.30.3' } as const;
const NAMES = ['node-a', 'node-b', 'node-c'];
const HOSTS_FILE = `127.0.0.1 localhost\n${Object.entries(NODES)
  .map(([host, address]) => `${address} node-${host}`)
  .join('\n')}\n`;

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

describe.skipIf(netnsUnavailable !== null)('verify peers, three nodes on a switch', () => {
  const lab = new Lab('vp');

  beforeAll(async () => {
    await lab.host('sw');
    await lab.ip('sw', 'link', 'add', 'br0', 'type', 'bridge');
    await lab.ip('sw', 'link', 'set', 'br0', 'up');
    for (const [host, address] of Object.entries(NODES)) {
      await lab.host(host, HOSTS_FILE);
      await lab.link(host, 'ens3f0', 'sw', `port-${host}`);
      await lab.ip('sw', 'link', 'set', `port-${host}`, 'master', 'br0');
      await lab.addr(host, 'ens3f0', `${address}/24`);
    }
  });

  afterEach(async () => {
    await lab.exec('c', 'iptables', ['-F', 'INPUT'], { reject: false, timeout: 10_000 });
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  const runAll = async (timeoutMs: number): Promise<Record<string, RunnerResult>> => {
    const results = await Promise.all(
      (['a', 'b', 'c'] as const).map((host) =>
        runVerify(lab, host, {
          level: 'peers',
          iface: 'ens3f0',
          master: { host: 'node-a', port: 29500 },
          peers: NAMES,
          timeoutMs,
          jobId: '7001',
        }),
      ),
    );
    return Object.fromEntries(results.map((result, index) => [NAMES[index], result]));
  };

  it('passes on every node, each seeing the true source address of every other', async () => {
    const reports = await runAll(15_000);
    for (const [self, result] of Object.entries(reports)) {
      expect(result.code, JSON.stringify(result.error)).toBe(0);
      const probes = result.report?.results.filter((peer) => peer.check === 'probe') ?? [];
      expect(probes.map((peer) => peer.peer).sort()).toEqual(NAMES.filter((name) => name !== self));
      const ownAddress = NODES[self.slice(5) as keyof typeof NODES];
      for (const peer of probes) {
        expect(peer).toMatchObject({ ok: true, port: 29501, seenSource: ownAddress });
        expect(peer.inbound?.source).toBe(NODES[peer.peer.slice(5) as keyof typeof NODES]);
      }
    }
    // node-a hosts the rendezvous, so it also checked that torchrun can bind 29500 there.
    expect(reports['node-a']?.report?.results.find((peer) => peer.check === 'bind')).toMatchObject({
      ok: true,
      address: NODES.a,
      port: 29500,
    });
    expect(failingPairs(reports)).toEqual([]);
  });

  it("names exactly the failing pairs when one node's probe port is firewalled", async () => {
    await iptables(lab, 'c', '-A', 'INPUT', '-p', 'tcp', '--dport', '29501', '-j', 'DROP');
    const reports = await runAll(6_000);
    expect(failingPairs(reports)).toEqual(['node-a→node-c', 'node-b→node-c']);
    for (const result of Object.values(reports)) expect(result.code).toBe(75);
    const fromA = reports['node-a'];
    expect(fromA?.error?.details).toEqual([
      expect.stringMatching(
        /^peer node-c at 198\.18\.30\.3:29501: this node → node-c: timed out \(no answer in [\d.]+m?s\)$/,
      ),
    ]);
    expect(fromA?.error?.message).toMatch(
      new RegExp(
        `^verification failed via ens3f0 \\(${NODES.a}\\): peer node-c at ${NODES.c}:29501: this node → node-c: timed out`,
      ),
    );
    expect(reports['node-c']?.error?.details).toHaveLength(2);
    for (const result of Object.values(reports)) expect(result.elapsedMs).toBeLessThan(7_000);
  });

  it('completes although strangers feed its listener garbage, an overlong line and idle connections', async () => {
    const nodeA = startVerify(lab, 'a', {
      level: 'peers',
      iface: 'ens3f0',
      peers: ['node-a', 'node-b'],
      probePort: 29601,
      timeoutMs: 25_000,
    });
    await nodeA.started;
    const abuse = await lab.exec('c', 'node', ['-e', ABUSER, NODES.a, '29601'], {
      timeout: 20_000,
    });
    const seen = JSON.parse(String(abuse.stdout)) as Record<
      string,
      { answer: string; closedAfterMs: number }[]
    >;
    for (const kind of ['garbage', 'overlong', 'idle'] as const) {
      expect(seen[kind]?.length).toBeGreaterThan(0);
      for (const connection of seen[kind] ?? []) expect(connection.answer).toBe('');
    }
    // Silence costs a connection after the listener's idle limit (3s), not before.
    for (const connection of seen.idle ?? [])
      expect(connection.closedAfterMs).toBeGreaterThanOrEqual(2_500);
    const nodeB = await runVerify(lab, 'b', {
      level: 'peers',
      iface: 'ens3f0',
      peers: ['node-a', 'node-b'],
      probePort: 29601,
      timeoutMs: 15_000,
    });
    const resultA = await nodeA.done;
    expect([resultA.code, nodeB.code]).toEqual([0, 0]);
    expect(resultA.report?.results).toEqual([
      expect.objectContaining({ peer: 'node-b', ok: true }),
    ]);
  });
});

/**
 * Waits (bounded) for the probe listener, then opens connections that send
 * garbage, an 8 KiB line without a newline, or nothing at all, and reports
 * for each what the listener answered and when it hung up.
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
    const args = {
      level: 'peers' as const,
      iface: 'ens3f0',
      peers: [X, Y],
      probePort: 29501,
      timeoutMs: 10_000,
    };
    const [fromX, fromY] = await Promise.all([
      runVerify(lab, 'x', args),
      runVerify(lab, 'y', args),
    ]);
    expect([fromX.code, fromY.code]).toEqual([75, 75]);
    expect(fromX.report?.results).toEqual([
      expect.objectContaining({
        peer: Y,
        ok: false,
        error: 'wrong source address',
        seenSource: ROUTER_RIGHT,
        detail: `it saw ${ROUTER_RIGHT}, we sent from ${X}`,
        inbound: { ok: true, error: null, detail: null, source: Y },
      }),
    ]);
    expect(fromX.error?.message).toBe(
      `verification failed via ens3f0 (${X}): peer ${Y} at ${Y}:29501: this node → ${Y}: wrong source address (it saw ${ROUTER_RIGHT}, we sent from ${X})`,
    );
    expect(fromY.report?.results).toEqual([
      expect.objectContaining({
        peer: X,
        ok: false,
        error: null,
        seenSource: Y,
        inbound: {
          ok: false,
          error: 'wrong source address',
          detail: `saw ${ROUTER_RIGHT}, it sends from ${X}`,
          source: ROUTER_RIGHT,
        },
      }),
    ]);
    // Both legs settled early: the check ends when all are done, not at the timeout.
    expect(fromX.elapsedMs).toBeLessThan(8_000);
  });
});
