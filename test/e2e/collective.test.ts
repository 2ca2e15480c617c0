/**
 * `--verify collective` for real (SPEC "Verification"): bin/nccl-run in
 * front of a real torchrun (1.13 on the host, 2.6 and 2.14 in the lab's
 * Debian roots) on nodes in network namespaces on one bridge, Gloo (no GPU
 * here, so NCCL never runs and `nccl` is empty):
 * - two healthy nodes pass and report a bus bandwidth (static and c10d);
 * - `run` then starts the real job, whose environment holds nothing of the
 *   pre-flight's, and no private folder is left;
 * - three nodes, one of them behind a 50 Mbit/s token bucket: that node is
 *   named, and every node exits 75;
 * - a node that passes peers but never joins the collective is named at the
 *   timeout.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CollectiveReport } from '../../src/collective/report.js';
import { CollectiveLab, type ColNode, jobOptions } from '../lab/collective-lab.js';
import { tier } from '../lab/tier.js';
import {
  type TorchStack,
  type TorchVersion,
  torchStack,
  torchUnavailable,
} from '../lab/torch-job.js';

const ENV_REPORT = new URL('../fixtures/env-report.py', import.meta.url).pathname;

interface CheckJson {
  ok: boolean;
  level: string;
  collective?: CollectiveReport;
}

function checkArgs(
  lab: CollectiveLab,
  stack: TorchStack,
  node: ColNode,
  job: { nodes: number; rendezvous: 'static' | 'c10d'; port: number },
  extra: readonly string[] = [],
  /** torchrun options of the job's own beside its shape, kept for the miniature. */
  launcherOptions: readonly string[] = [],
): string[] {
  return [
    ...['check', '--json', '--verify', 'collective', '--verify-timeout', '60s'],
    ...['--torchrun', stack.torchrun.join(' '), ...extra],
    ...jobOptions(lab, stack, node, job),
    ...launcherOptions,
    'train.py',
  ];
}

/** Polls an observable state until it holds; fails with the bound's reason if it never does. */
async function until(holds: () => boolean | Promise<boolean>, boundMs: number): Promise<void> {
  const began = performance.now();
  while (!(await holds())) {
    if (performance.now() - began > boundMs) throw new Error(`not reached in ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function parsed(stdout: string): CheckJson {
  return JSON.parse(stdout) as CheckJson;
}

/** Two healthy nodes: both pass, with the same gathered figures. */
async function twoHealthyNodes(
  lab: CollectiveLab,
  stack: TorchStack,
  rendezvous: 'static' | 'c10d',
  port: number,
  launcherOptions: readonly string[] = [],
): Promise<void> {
  const job = { nodes: 2, rendezvous, port };
  const runs = await Promise.all(
    (['col-a', 'col-b'] as const).map((node) =>
      lab.run(node, stack, checkArgs(lab, stack, node, job, [], launcherOptions)),
    ),
  );
  for (const run of runs) expect(run.code, run.stderr).toBe(0);
  const [a, b] = runs.map((run) => parsed(run.stdout));
  expect(a?.collective).toMatchObject({ backend: 'gloo', ranks: 2, nccl: [] });
  expect(a?.collective?.verdict).toEqual({ ok: true, findings: expect.any(Array) });
  const bus = a?.collective?.busBandwidth.at(-1)?.busBandwidth ?? 0;
  expect(bus).toBeGreaterThan(0);
  expect(b?.collective?.busBandwidth).toEqual(a?.collective?.busBandwidth);
  expect(a?.collective?.links.map((link) => link.name)).toEqual(['col-a', 'col-b']);
  expect(lab.leftovers()).toEqual([]);
}

/** `run`: the miniature, the barrier, then the real job with the original environment. */
async function runThenRealJob(
  lab: CollectiveLab,
  stack: TorchStack,
  rendezvous: 'static' | 'c10d',
  port: number,
): Promise<void> {
  const out = mkdtempSync(join(lab.tmp, 'job-'));
  const job = { nodes: 2, rendezvous, port };
  const runs = await Promise.all(
    (['col-a', 'col-b'] as const).map((node) =>
      lab.run(node, stack, [
        ...['--verify', 'collective', '--verify-timeout', '60s', '--torchrun'],
        ...[stack.torchrun.join(' '), ...jobOptions(lab, stack, node, job), ENV_REPORT, out],
      ]),
    ),
  );
  for (const run of runs) {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/verify collective: passed, gloo on 2 ranks, bus bandwidth/);
  }
  for (const rank of [0, 1]) {
    const env = JSON.parse(readFileSync(join(out, `env.${rank}.json`), 'utf8')) as Record<
      string,
      string
    >;
    // Nothing of the pre-flight's reached the real job; nccl-run's own exports did.
    expect(Object.keys(env).filter((name) => name.startsWith('NCCL_DEBUG'))).toEqual([]);
    expect(env.NCCL_SOCKET_IFNAME).toBe('=eth1');
    expect(env.GLOO_SOCKET_IFNAME).toBe('eth1');
  }
  expect(lab.leftovers()).toEqual([]);
}

/**
 * SIGTERM to node B's nccl-run once both workers run: bin/nccl-run's shell
 * ends Node with SIGKILL, and the guard stops the miniature (torch 2.x starts
 * workers in sessions of their own: torchrun itself must stop them). B, not
 * the store's host A: B's workers would live on with A's store and A's ranks.
 */
async function stopOneNode(lab: CollectiveLab, stack: TorchStack, port: number): Promise<void> {
  const job = { nodes: 2, rendezvous: 'static' as const, port };
  const stop = new AbortController();
  // 20 s: the other node waits that long for its lost peer, then 15 s at the barrier.
  const args = (node: ColNode) =>
    checkArgs(lab, stack, node, job).map((word) => (word === '60s' ? '20s' : word));
  const a = lab.run('col-a', stack, args('col-a'));
  const b = lab.run('col-b', stack, args('col-b'), { cancelSignal: stop.signal });
  // Both workers have started (each wrote its stage) before the signal.
  await until(() => lab.stages().length >= 2, 120_000);
  stop.abort();
  const ended = await b;
  // bin/nccl-run dies of the signal itself (SPEC "Launch": 128 + N).
  expect([ended.code, ended.signal]).toEqual([-1, 'SIGTERM']);
  await until(async () => (await lab.pids('col-b')).length === 0, 10_000);
  // The other node's miniature lost its peer: it fails, and names it at the end.
  const other = await a;
  expect(other.code, other.stderr).toBe(75);
  expect(lab.leftovers()).toEqual([]);
}

function torchTier(version: TorchVersion, body: (stack: () => TorchStack) => void): void {
  tier(`--verify collective with torch ${version}`, torchUnavailable(version), () => {
    body(() => torchStack(version));
  });
}

torchTier('1.13', (stack) => {
  let lab: CollectiveLab;
  beforeAll(async () => {
    lab = await CollectiveLab.create(3);
  }, 60_000);
  afterAll(async () => {
    await lab?.cleanup();
  });

  it("two healthy nodes pass with one verdict and report a bus bandwidth (static), torchrun 1.13 writing its workers' output to files and the terminal (--redirects 1 --tee 1)", async () => {
    // The miniature's figures come back through its private folder, not the workers' stdout.
    await twoHealthyNodes(lab, stack(), 'static', 29611, ['--redirects', '1', '--tee', '1']);
  }, 180_000);

  it('run: c10d, the miniature, then the real job, nothing of the pre-flight left', async () => {
    await runThenRealJob(lab, stack(), 'c10d', 29612);
  }, 240_000);

  it('three nodes, col-c behind 50 Mbit/s: col-c named, 75 on every node', async () => {
    await lab.shape('col-c', '50mbit');
    const job = { nodes: 3, rendezvous: 'static' as const, port: 29613 };
    const runs = await Promise.all(
      (['col-a', 'col-b', 'col-c'] as const).map((node) =>
        lab.run(node, stack(), checkArgs(lab, stack(), node, job)),
      ),
    );
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(75);
      const report = parsed(run.stdout).collective;
      const slow = report?.verdict.findings.filter((finding) => finding.rule === 'slow link');
      expect(slow?.map((finding) => finding.nodes)).toEqual([['col-c']]);
      expect(slow?.[0]?.message).toMatch(/^col-c \(host col-c, 198\.18\.70\.3\): its link runs at/);
      expect(run.stderr).toMatch(/verification failed via eth1 .*col-c/);
    }
  }, 240_000);

  it('a node that passes peers but never joins the collective is named at the timeout', async () => {
    const job = { nodes: 2, rendezvous: 'static' as const, port: 29614 };
    const [a, b] = await Promise.all([
      lab.run('col-a', stack(), [
        ...checkArgs(lab, stack(), 'col-a', job).map((word) => (word === '60s' ? '8s' : word)),
      ]),
      // col-b checks only as far as peers, then is gone: it never starts the miniature.
      lab.run(
        'col-b',
        stack(),
        checkArgs(lab, stack(), 'col-b', job).map((word) =>
          word === 'collective' ? 'peers' : word,
        ),
      ),
    ]);
    expect(b?.code, b?.stderr).toBe(0);
    expect(a?.code, a?.stderr).toBe(75);
    const findings = parsed(a?.stdout ?? '').collective?.verdict.findings ?? [];
    expect(findings.map((finding) => finding.rule)).toEqual(['timeout', 'timeout']);
    expect(findings[0]?.message).toMatch(
      /^the collective did not complete within 8s \(--verify-timeout\): on this node \(col-a\) no rank started/,
    );
    expect(findings[1]?.message).toMatch(/did not reach the end of the collective/);
    expect(lab.leftovers()).toEqual([]);
  }, 180_000);

  it('SIGTERM to one node during the miniature: its torchrun and workers end, nothing is left', async () => {
    await stopOneNode(lab, stack(), 29615);
  }, 240_000);
});

torchTier('2.6', (stack) => {
  let lab: CollectiveLab;
  beforeAll(async () => {
    lab = await CollectiveLab.create(2);
  }, 60_000);
  afterAll(async () => {
    await lab?.cleanup();
  });

  it('run: c10d, the miniature, then the real job, nothing of the pre-flight left', async () => {
    await runThenRealJob(lab, stack(), 'c10d', 29621);
  }, 300_000);

  it('SIGTERM to one node during the miniature (torch 2.x: workers in sessions of their own)', async () => {
    await stopOneNode(lab, stack(), 29622);
  }, 240_000);
});

torchTier('2.14', (stack) => {
  let lab: CollectiveLab;
  beforeAll(async () => {
    lab = await CollectiveLab.create(2);
  }, 60_000);
  afterAll(async () => {
    await lab?.cleanup();
  });

  it('two healthy nodes pass with one verdict and report a bus bandwidth (static)', async () => {
    await twoHealthyNodes(lab, stack(), 'static', 29631);
  }, 300_000);
});
