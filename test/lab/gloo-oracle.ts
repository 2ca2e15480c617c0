/**
 * The real Gloo as an oracle (issue 19 item 4, shared/LAB.md "Real Gloo"):
 * two namespaced hosts, rank 0 and rank 1 of a 2-rank Gloo group made by
 * real torch (the host's, and Debian 13's 2.6 in the lab root), each under
 * an LD_PRELOAD shim (gloo-shim.c, built here with gcc) that logs every inet
 * listen(2) and connect(2). For each case, what rank 1 listens on is the
 * address of its Gloo device: what Gloo picked; whether the all-reduce ran
 * says whether the job could work. test/e2e/gloo-oracle.test.ts holds
 * nccl-run's `unmanaged.gloo` and its refusals to that.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { CHECKOUT, inRoot } from './debian-root.js';
import type { Lab } from './netns.js';

/** One case: each rank's hostname and GLOO_SOCKET_IFNAME (null: unset). */
export interface GlooCase {
  id: string;
  ranks: [RankSetting, RankSetting];
  /** The group's timeout; a group that cannot connect fails after five times it. */
  seconds: number;
}

export interface RankSetting {
  hostname: string;
  GLOO_SOCKET_IFNAME: string | null;
}

export interface GlooObserved {
  /** "ok", or the exception's class and first line. */
  outcome: string;
  /** What rank 1 listened on in this case, in order: its devices' addresses (scope id dropped). */
  listens: string[];
  /** How long rank 1's group took to work or fail. */
  seconds: number;
}

/** Where the ranks run: the host itself ('/') or a Debian root, with its Python. */
export interface TorchSite {
  root: string;
  python: string;
  env: Readonly<Record<string, string>>;
}

/** Builds gloo-shim.c into a temporary folder; returns the folder (the shim is gloo-shim.so there). */
export function buildShim(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-gloo-shim-'));
  execFileSync('gcc', [
    '-shared',
    '-fPIC',
    '-O1',
    '-o',
    join(dir, 'gloo-shim.so'),
    join(CHECKOUT, 'test/lab/gloo-shim.c'),
    '-ldl',
  ]);
  return dir;
}

/** gcc on PATH, or why the tier cannot run. */
export const gccUnavailable: string | null = (() => {
  try {
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'the Gloo oracle builds its LD_PRELOAD shim with gcc, and there is none';
  }
})();

const SCRIPT = join(CHECKOUT, 'test/lab/gloo-ranks.py');

/**
 * argv running `python SCRIPT args` on a lab host as `hostname`, inside
 * `site.root` with the shim folder at /mnt (a private mount namespace, so
 * neither the cached root nor the machine is touched), with the shim
 * preloaded and logging to `log` (a file name in the shim folder).
 */
function rankArgv(
  lab: Lab,
  host: string,
  hostname: string,
  site: TorchSite,
  shimDir: string,
  log: string,
  args: string[],
): string[] {
  const inside = site.root === '/' ? shimDir : '/mnt';
  const env = [
    `PATH=/usr/sbin:/usr/bin:/sbin:/bin`,
    'HOME=/root',
    `LD_PRELOAD=${inside}/gloo-shim.so`,
    `GLOO_SHIM_LOG=${inside}/${log}`,
    ...Object.entries(site.env).map(([key, value]) => `${key}=${value}`),
  ];
  return [
    ...['ip', 'netns', 'exec', lab.ns(host)],
    ...inRoot(
      site.root,
      hostname,
      '/usr/bin/env',
      ['-i', ...env, site.python, SCRIPT, ...args],
      site.root === '/' ? [] : [[shimDir, '/mnt']],
    ),
  ];
}

/**
 * Runs every case on the two hosts (rank 0 on `hosts[0]`, which hosts the
 * store at `master`:`port`) and returns rank 1's observations by case id,
 * and the torch version both reported.
 */
export async function runGlooCases(
  lab: Lab,
  hosts: [string, string],
  master: string,
  port: number,
  site: TorchSite,
  shimDir: string,
  cases: readonly GlooCase[],
): Promise<{ torch: string; observed: Map<string, GlooObserved> }> {
  const tag = `${hosts[1]}-${port}`;
  const run = (rank: 0 | 1) => {
    const [command, ...args] = rankArgv(
      lab,
      hosts[rank],
      cases[0]?.ranks[rank].hostname ?? 'node',
      site,
      shimDir,
      `${tag}-rank${rank}.log`,
      [String(rank), master, String(port), JSON.stringify(cases)],
    );
    return execa(command as string, args, {
      reject: false,
      all: true,
      timeout: 60_000 + cases.reduce((sum, entry) => sum + entry.seconds * 6_000, 0),
      extendEnv: false,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  };
  const [rank0, rank1] = await Promise.all([run(0), run(1)]);
  const lines = String(rank1.stdout)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) =>
        JSON.parse(line) as { torch?: string; case?: string; outcome?: string; seconds?: number },
    );
  const torch = lines.find((line) => line.torch !== undefined)?.torch;
  if (torch === undefined || lines.filter((line) => line.case).length !== cases.length) {
    throw new Error(
      `the Gloo ranks did not finish:\nrank 0:\n${String(rank0.all)}\nrank 1:\n${String(rank1.all)}`,
    );
  }
  const listens = listensByCase(readFileSync(join(shimDir, `${tag}-rank1.log`), 'utf8'), port);
  const observed = new Map<string, GlooObserved>();
  for (const line of lines) {
    if (line.case === undefined) continue;
    observed.set(line.case, {
      outcome: line.outcome ?? '?',
      listens: listens.get(line.case) ?? [],
      seconds: line.seconds ?? 0,
    });
  }
  return { torch, observed };
}

/** The shim log's listen addresses after each case marker, leaving out the store's port. */
export function listensByCase(log: string, storePort: number): Map<string, string[]> {
  const byCase = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of log.split('\n')) {
    const marker = /^case (\S+)$/.exec(line);
    if (marker?.[1] !== undefined) {
      current = [];
      byCase.set(marker[1], current);
      continue;
    }
    const listen = /^listen (\S+?)(?:%\d+)? (\d+) rc=0$/.exec(line);
    if (listen?.[1] !== undefined && Number(listen[2]) !== storePort && current !== null) {
      if (!current.includes(listen[1])) current.push(listen[1]);
    }
  }
  return byCase;
}
