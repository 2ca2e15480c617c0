/**
 * `--verify local` and `--verify master` between two network namespaces
 * joined by two veth links (SPEC "Verification"; shared/LAB.md): a master
 * that comes late, one that never comes, firewalls that drop and reject,
 * a port already taken on the master node, a route through the wrong
 * interface, and torchrun's real TCPStore surviving the check.
 */
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { torch26Env } from '../lab/debian-root.js';
import { HOST_TORCHRUN, torchrunInterpreter, torchrunVersion } from '../lab/host-torchrun.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier, tierTest } from '../lab/tier.js';
import { iptables, listenInside, runVerify, startVerify } from './verify-lab.js';

const MASTER = { host: '198.18.10.1', port: 29500 };
/** torch's Python: the one the host's torchrun runs (3.11 on Debian 12, 3.13 on Debian 13). */
const TORCH_PYTHON = torchrunInterpreter();
const torchUnavailable = !existsSync(HOST_TORCHRUN)
  ? `Debian's torch (${HOST_TORCHRUN}) is not installed`
  : TORCH_PYTHON === null
    ? `${HOST_TORCHRUN} has no #! line naming its Python`
    : !existsSync(TORCH_PYTHON)
      ? `${TORCH_PYTHON}, on ${HOST_TORCHRUN}'s #! line, is missing`
      : null;
/** LAB WORKAROUND (debian-root.ts torch26Env): Debian's torch 2.6 TCPStore needs use_libuv=False. */
const TORCH_ENV = torchrunVersion()?.startsWith('1.') ? {} : torch26Env;

tier('verify master and local, in namespaces', netnsUnavailable, () => {
  const lab = new Lab('vm');
  const stops: (() => void)[] = [];

  beforeAll(async () => {
    await lab.host('m');
    await lab.host('w');
    await lab.link('m', 'ens3f0', 'w', 'ens3f0');
    await lab.addr('m', 'ens3f0', '198.18.10.1/24');
    await lab.addr('w', 'ens3f0', '198.18.10.2/24');
    await lab.link('m', 'eth1', 'w', 'eth1');
    await lab.addr('m', 'eth1', '198.18.20.1/24');
    await lab.addr('w', 'eth1', '198.18.20.2/24');
  });

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await lab.exec('m', 'iptables', ['-F', 'INPUT'], { reject: false, timeout: 10_000 });
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  it('succeeds when the master starts listening seconds after the worker began checking', async () => {
    const run = startVerify(lab, 'w', {
      level: 'master',
      iface: 'ens3f0',
      master: MASTER,
      timeoutMs: 20_000,
    });
    await run.started;
    await delay(2_500);
    stops.push((await listenInside(lab, 'm', MASTER.host, MASTER.port)).stop);
    const result = await run.done;
    expect(result.code).toBe(0);
    // The store as torch reaches it, then the master's address on the chosen network from the chosen one.
    expect(result.report?.results).toEqual([
      expect.objectContaining({
        check: 'connect',
        peer: MASTER.host,
        address: MASTER.host,
        port: 29500,
        ok: true,
      }),
      expect.objectContaining({ check: 'data path', address: MASTER.host, ok: true }),
    ]);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2_500);
  });

  it('fails with exit 75 within the timeout plus one second when the master never listens', async () => {
    const result = await runVerify(lab, 'w', {
      level: 'master',
      iface: 'ens3f0',
      master: MASTER,
      timeoutMs: 3_000,
    });
    expect(result.code).toBe(75);
    expect(result.error?.message).toBe(
      "verification failed via ens3f0 (198.18.10.2): cannot reach the master 198.18.10.1's store (as torch's TCPStore reaches it) at 198.18.10.1:29500: refused (ECONNREFUSED)",
    );
    expect(result.report?.results[0]).toMatchObject({
      ok: false,
      error: 'refused',
      check: 'connect',
    });
    // Refused is retried like silence until the timeout: workers start before the master's store.
    expect(result.elapsedMs).toBeGreaterThanOrEqual(3_000);
  });

  it('reports a DROP on the master port as timed out', async () => {
    stops.push((await listenInside(lab, 'm', MASTER.host, MASTER.port)).stop);
    await iptables(lab, 'm', '-A', 'INPUT', '-p', 'tcp', '--dport', '29500', '-j', 'DROP');
    const result = await runVerify(lab, 'w', {
      level: 'master',
      iface: 'ens3f0',
      master: MASTER,
      timeoutMs: 3_000,
    });
    expect(result.code).toBe(75);
    expect(result.report?.results[0]).toMatchObject({ ok: false, error: 'timed out' });
    expect(result.error?.message).toContain('198.18.10.1:29500: timed out');
  });

  it('reports a REJECT with tcp-reset on a listening master as refused', async () => {
    stops.push((await listenInside(lab, 'm', MASTER.host, MASTER.port)).stop);
    await iptables(
      lab,
      'm',
      '-A',
      'INPUT',
      '-p',
      'tcp',
      '--dport',
      '29500',
      '-j',
      'REJECT',
      '--reject-with',
      'tcp-reset',
    );
    const result = await runVerify(lab, 'w', {
      level: 'master',
      iface: 'ens3f0',
      master: MASTER,
      timeoutMs: 2_000,
    });
    expect(result.code).toBe(75);
    expect(result.report?.results[0]).toMatchObject({
      ok: false,
      error: 'refused',
      detail: 'ECONNREFUSED',
    });
  });

  it('fails on the master node when the rendezvous port is already taken', async () => {
    stops.push((await listenInside(lab, 'm', MASTER.host, MASTER.port)).stop);
    const result = await runVerify(lab, 'm', {
      level: 'master',
      iface: 'ens3f0',
      master: MASTER,
      nodeRank: 0,
      timeoutMs: 2_000,
    });
    expect(result.code).toBe(75);
    expect(result.error?.message).toBe(
      "verification failed via ens3f0 (198.18.10.1): this node hosts the rendezvous of 198.18.10.1, but 198.18.10.1:29500 cannot be bound: port in use (EADDRINUSE); torchrun's store would fail to start",
    );
    // And it does not wait: the bind is the master node's one check, and nothing was retried.
    expect(result.report?.results.map((entry) => entry.check)).toEqual(['bind']);
  });

  it('warns, naming both interfaces and the overlapping routes, when the route to the master leaves elsewhere', async () => {
    await lab.ip('w', 'route', 'add', '198.18.10.1/32', 'dev', 'eth1');
    try {
      const result = await runVerify(lab, 'w', {
        level: 'local',
        iface: 'ens3f0',
        master: MASTER,
        timeoutMs: 2_000,
      });
      expect(result.code).toBe(0);
      expect(result.report?.warnings).toHaveLength(1);
      const [warning] = result.report?.warnings ?? [];
      expect(warning).toMatch(
        /^the route to the master 198\.18\.10\.1 leaves through eth1, not the chosen ens3f0; routes covering it: /,
      );
      expect(warning).toContain('198.18.10.0/24 dev ens3f0');
      expect(warning).toContain('198.18.10.1/32 dev eth1');
    } finally {
      await lab.ip('w', 'route', 'del', '198.18.10.1/32', 'dev', 'eth1');
    }
    const straight = await runVerify(lab, 'w', {
      level: 'local',
      iface: 'ens3f0',
      master: MASTER,
      timeoutMs: 2_000,
    });
    expect(straight.report?.warnings).toEqual([]);
  });

  tierTest(
    "leaves torchrun's TCPStore working after connecting and closing at once",
    torchUnavailable,
    async () => {
      const store = lab.exec(
        'm',
        TORCH_PYTHON as string,
        [
          '-c',
          [
            'import datetime, torch.distributed as d',
            `s = d.TCPStore("${MASTER.host}", ${MASTER.port}, 2, True, timeout=datetime.timedelta(seconds=40), wait_for_workers=False)`,
            'print("up", flush=True)',
            's.wait(["joined"])',
            'print("joined by", s.get("joined").decode(), flush=True)',
          ].join('\n'),
        ],
        { reject: false, timeout: 60_000, env: TORCH_ENV },
      );
      stops.push(() => store.kill('SIGKILL'));
      const first = await runVerify(lab, 'w', {
        level: 'master',
        iface: 'ens3f0',
        master: MASTER,
        timeoutMs: 30_000,
      });
      const second = await runVerify(lab, 'w', {
        level: 'master',
        iface: 'ens3f0',
        master: MASTER,
        timeoutMs: 5_000,
      });
      expect([first.code, second.code]).toEqual([0, 0]);
      const client = await lab.exec(
        'w',
        TORCH_PYTHON as string,
        [
          '-c',
          [
            'import datetime, torch.distributed as d',
            `c = d.TCPStore("${MASTER.host}", ${MASTER.port}, 2, False, timeout=datetime.timedelta(seconds=20))`,
            'c.set("joined", "worker")',
            'print("set", flush=True)',
          ].join('\n'),
        ],
        { reject: false, timeout: 40_000, env: TORCH_ENV },
      );
      expect(client.stdout).toBe('set');
      const served = await store;
      expect(String(served.stdout).split('\n')).toEqual(['up', 'joined by worker']);
      expect(served.exitCode).toBe(0);
    },
  );
});
