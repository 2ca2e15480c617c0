/**
 * What the two torch tiers of the two-node lab share
 * (test/e2e/two-node-torchrun.test.ts: torch 1.13 on the host;
 * two-node-torch26.test.ts: torch 2.6 in the Debian 13 root): the lab's life
 * around a tier's tests, the bandwidth bounds, the jobs' defaults, and the
 * checks both tiers make the same way (the all-reduce over the data link,
 * torchrun's status for a failed script, SIGTERM to one node's nccl-run).
 * Each tier keeps what its torch does differently.
 */
import { existsSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import {
  outputMatches,
  processNames,
  txCounters,
  workerSocketsWhenReported,
} from './observe-job.js';
import {
  type AllreduceReport,
  type JobSpec,
  type Launcher,
  parseReport,
  startNode,
  type TorchVersion,
  torchStack,
} from './torch-job.js';
import { cleanupOnSignal, MANAGEMENT_RATE_MBIT, TwoNodeLab } from './two-node.js';

/** The most a 50 Mbit/s link can carry, in MB/s (10^6 bytes). */
export const MANAGEMENT_MB_PER_S = MANAGEMENT_RATE_MBIT / 8;
/** Above this the all-reduce cannot have crossed the management link. */
export const DATA_LINK_FLOOR_MB_PER_S = 4 * MANAGEMENT_MB_PER_S;
export const MB = 1_000_000;

/**
 * Inside a tier: builds the lab before its first test and hands it to `use`,
 * removes it after the last, and between tests kills what a test abandoned
 * on purpose (a SIGTERM, a failed rank leaves its peer waiting on torchrun's
 * exit barrier) and restores the plain /etc/hosts, so each job starts on
 * quiet nodes.
 */
export function useTwoNodeLab(tag: string, use: (lab: TwoNodeLab) => void): void {
  let lab: TwoNodeLab | undefined;
  let removeSignalHandlers = () => {};

  beforeAll(async () => {
    lab = await TwoNodeLab.create(tag);
    // Ctrl-C on a test run reaches this worker too; afterAll would not run then.
    removeSignalHandlers = cleanupOnSignal(lab);
    use(lab);
  });
  afterEach(async () => {
    lab?.setExtraHosts([]);
    await lab?.stopProcesses();
  });
  afterAll(async () => {
    removeSignalHandlers();
    await lab?.cleanup();
  });
}

/**
 * A job of a tier: a static rendezvous, 8 MB twice, nccl-run logging JSON
 * and verifying for up to 60 s, each node killed after 90 s; `extra`
 * replaces any of these.
 */
export function tierJob(
  torch: TorchVersion,
  launcher: Launcher,
  port: number,
  extra: Partial<JobSpec> = {},
): JobSpec {
  return {
    torch,
    launcher,
    rendezvous: 'static',
    port,
    scriptArgs: ['--mb', '8', '--iters', '2'],
    ncclRunArgs: ['--log-format', 'json', '--verify-timeout', '60s'],
    timeoutMs: 90_000,
    ...extra,
  };
}

/** Starts the job on node A, then on node B, without waiting. */
export function startBoth(lab: TwoNodeLab, job: JobSpec) {
  return { a: startNode(lab, 'A', job), b: startNode(lab, 'B', job) };
}

/** The number after `name` in allreduce.py's arguments; throws when the job does not give it. */
function scriptNumber(job: JobSpec, name: string): number {
  const index = job.scriptArgs.indexOf(name);
  const value = Number(job.scriptArgs[index + 1]);
  if (index < 0 || !Number.isFinite(value)) throw new Error(`the job gives no ${name} number`);
  return value;
}

/**
 * Runs a job that holds its workers after the report (`--hold`) and shows
 * three independent ways that its all-reduce went over the data link, each
 * node on its own interface name: a bandwidth above what the management
 * link can carry, the kernel's byte counters of both links, and the Gloo
 * sockets of A's workers (those not to the master port), all from A's data
 * address (198.18.10.1) to B's. Returns rank 0's report for what else a tier checks.
 */
export async function expectOverDataLink(
  lab: TwoNodeLab,
  job: JobSpec,
): Promise<AllreduceReport | null> {
  const txBefore = await txCounters(lab);
  const { a, b } = startBoth(lab, job);
  const sockets = await workerSocketsWhenReported(lab, a.all, 'A');
  const [ra, rb] = await Promise.all([a, b]);
  const txAfter = await txCounters(lab);

  expect([ra.exitCode, rb.exitCode], String(ra.all) + String(rb.all)).toEqual([0, 0]);
  const report = parseReport(String(ra.all));
  expect(report?.ranks).toBe(2);
  expect(report?.torch).toMatch(new RegExp(`^${job.torch.replace('.', '\\.')}\\.`));
  expect(report?.glooSocketIfname).toBe('ens3f0');
  expect(String(rb.all)).toMatch(/enp65s0/);
  expect(report?.mbPerSecond).toBeGreaterThan(DATA_LINK_FLOOR_MB_PER_S);

  // A ring all-reduce of 2 ranks sends the whole tensor from each rank per
  // iteration: ITERS x MB left A over ens3f0, next to nothing over eth0.
  const sent = scriptNumber(job, '--iters') * scriptNumber(job, '--mb') * MB;
  expect(txAfter.A.data - txBefore.A.data).toBeGreaterThan(sent);
  expect(txAfter.A.mgmt - txBefore.A.mgmt).toBeLessThan(1 * MB);
  expect(txAfter.B.mgmt - txBefore.B.mgmt).toBeLessThan(1 * MB);

  const master = `:${job.port}`;
  const gloo = sockets.filter((s) => !s.peer.endsWith(master) && !s.local.endsWith(master));
  expect(gloo.length).toBeGreaterThan(0);
  for (const socket of gloo) {
    expect(socket.local).toMatch(/^198\.18\.10\.1:/);
    expect(socket.peer).toMatch(/^198\.18\.10\.2:/);
  }
  return report;
}

/**
 * Runs a job whose script exits with 3 on each rank (`--exit-code 3`):
 * torchrun reports the rank's own code and itself exits 1 on a failed worker
 * (ChildFailedError raised out of torch/distributed/run.py main), and node
 * A's nccl-run exits with that.
 */
export async function expectFailedScriptStatus(lab: TwoNodeLab, job: JobSpec): Promise<void> {
  const { a, b } = startBoth(lab, job);
  const ra = await a;

  expect(String(ra.all)).toMatch(/exitcode\s*:\s*3/);
  expect(ra.exitCode).toBe(1);
  await lab.stopProcesses();
  await b;
}

/**
 * Runs a job that holds its workers after the report (`--hold 60`), checks
 * that node B runs all of `running` and none of `between` (what nccl-run
 * and the launcher exec'd away), then sends B's nccl-run SIGTERM. torch's
 * agent, 1.13's and 2.6's alike, turns it into SignalException, stops its
 * workers and exits 1 (elastic/multiprocessing/api.py
 * _terminate_process_handler); nccl-run passes that status through (SPEC
 * "Exit status": torchrun's own), and nothing is left on B.
 */
export async function expectSigtermEndsNodeB(
  lab: TwoNodeLab,
  job: JobSpec,
  processes: { running: readonly string[]; between: readonly string[] },
): Promise<void> {
  const { a, b } = startBoth(lab, job);
  await outputMatches(a.all, /\{"ranks"/, 60_000);
  const before = await processNames(lab, 'B');
  expect(before).toEqual(expect.arrayContaining([...processes.running]));
  for (const between of processes.between) expect(before).not.toContain(between);

  b.kill('SIGTERM');
  const rb = await b;

  expect(rb.exitCode, String(rb.all)).toBe(1);
  expect(String(rb.all)).toMatch(/SignalException: Process \d+ got signal: 15/);
  expect(await lab.pids('B')).toEqual([]);
  // Killing nccl-run alone would leave A's torchrun holding the pipes.
  await lab.stopProcesses();
  await a;
}

/**
 * The single executable run inside the torch's lab root, where no Node.js
 * is, as on a GPU node: the job crosses the data link as through the shell
 * entry (expectOverDataLink), and the workers get A's data address.
 */
export async function expectSingleExecutableInRoot(
  lab: TwoNodeLab,
  torch: TorchVersion,
  port: number,
): Promise<void> {
  const [, root] = torchStack(torch).torchrun;
  expect(existsSync(`${root}/usr/bin/node`) || existsSync(`${root}/usr/local/bin/node`)).toBe(
    false,
  );
  const report = await expectOverDataLink(
    lab,
    tierJob(torch, 'single-executable', port, {
      scriptArgs: ['--mb', '16', '--iters', '3', '--hold', '2'],
    }),
  );
  expect(report?.masterAddr).toBe(lab.a.dataAddress);
}
