/**
 * One multi-node job on the two-node lab: real torchrun (Debian's
 * python3-torch 1.13, Gloo) on both nodes running test/fixtures/allreduce.py,
 * started three ways:
 *
 * - `torchrun`: torchrun alone, as an untuned user runs it;
 * - `hand-set`: torchrun with GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME set per
 *   node to its data interface, as an expert would;
 * - `nccl-run`: `node bin/nccl-run.js` in front of the same torchrun argv.
 *
 * Used by the e2e tests, the demo and the bench, so all three measure the
 * same thing.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Options as ExecaOptions } from 'execa';
import type { NodeName, TwoNodeLab } from './two-node.js';

export const TORCHRUN = '/usr/bin/torchrun';
export const ALLREDUCE_SCRIPT = fileURLToPath(new URL('../fixtures/allreduce.py', import.meta.url));
export const NCCL_RUN_BIN = fileURLToPath(new URL('../../bin/nccl-run.js', import.meta.url));

/** Why the real-torchrun tier cannot run here, or null when it can. */
export const torchrunUnavailable: string | null =
  process.getuid?.() !== 0
    ? 'the two-node lab needs root for network namespaces (CI runs as root)'
    : !existsSync(TORCHRUN)
      ? `${TORCHRUN} is missing (apt-get install -y --no-install-recommends python3-torch)`
      : null;

export type Launcher = 'torchrun' | 'hand-set' | 'nccl-run';
export type Rendezvous = 'static' | 'c10d';

export interface JobSpec {
  launcher: Launcher;
  rendezvous: Rendezvous;
  /** Master / rendezvous port on node A's data address. */
  port: number;
  /** Arguments of allreduce.py (e.g. ['--mb', '16']). */
  scriptArgs: readonly string[];
  /** nccl-run's own options, before the torchrun argv. */
  ncclRunArgs?: readonly string[];
  /** Extra environment for both nodes. */
  env?: Record<string, string>;
  /** Kill each node's process after this long (default 120 s). */
  timeoutMs?: number;
}

/** What allreduce.py prints from rank 0. */
export interface AllreduceReport {
  ranks: number;
  mb: number;
  iters: number;
  seconds: number;
  mbPerSecond: number;
  glooSocketIfname: string | null;
  hostname: string;
}

/**
 * torchrun's argv for one node. Debian's torchrun 1.13 knows only the
 * underscore spellings (`--node_rank`); `--redirects 1 --tee 1` works around
 * its Python 3.11 crash at worker start (LAB.md).
 */
export function torchrunArgs(lab: TwoNodeLab, node: NodeName, job: JobSpec): string[] {
  const common = ['--nnodes', '2', '--nproc_per_node', '1', '--redirects', '1', '--tee', '1'];
  const rendezvous =
    job.rendezvous === 'static'
      ? [
          ...['--node_rank', node === 'A' ? '0' : '1'],
          ...['--master_addr', lab.a.dataAddress, '--master_port', String(job.port)],
        ]
      : [
          ...['--rdzv_backend', 'c10d', '--rdzv_endpoint', `${lab.a.dataAddress}:${job.port}`],
          '--rdzv_id',
          'e2e',
          // torchrun hosts the c10d store only where the endpoint matches the
          // hostname or an address it resolves to (rendezvous/utils.py
          // _matches_machine_hostname); the data address is neither, so the
          // master node says so, as a user on such a cluster must.
          ...(node === 'A' ? ['--rdzv_conf', 'is_host=1'] : []),
        ];
  return [...common, ...rendezvous, ALLREDUCE_SCRIPT, ...job.scriptArgs];
}

/** The command line a node runs for this job. */
export function nodeCommand(lab: TwoNodeLab, node: NodeName, job: JobSpec): [string, string[]] {
  const args = torchrunArgs(lab, node, job);
  if (job.launcher !== 'nccl-run') return [TORCHRUN, args];
  // No `--`: nccl-run is a drop-in prefix, its options end at torchrun's first.
  return [
    process.execPath,
    [NCCL_RUN_BIN, '--torchrun', TORCHRUN, ...(job.ncclRunArgs ?? []), ...args],
  ];
}

/** Starts one node's side of the job; the promise resolves with its result, never rejects. */
export function startNode(
  lab: TwoNodeLab,
  node: NodeName,
  job: JobSpec,
  options: ExecaOptions = {},
) {
  const env: Record<string, string> = { ...job.env };
  if (job.launcher === 'hand-set') {
    const iface = lab.node(node).dataIface;
    env.GLOO_SOCKET_IFNAME = iface;
    env.NCCL_SOCKET_IFNAME = `=${iface}`;
  }
  const [command, args] = nodeCommand(lab, node, job);
  return lab.run(node, command, args, {
    ...options,
    all: true,
    reject: false,
    timeout: job.timeoutMs ?? 120_000,
    env,
  });
}

/** The JSON line rank 0 printed (torchrun's --tee prefixes it with `[default0]:`). */
export function parseReport(output: string): AllreduceReport | null {
  for (const line of output.split('\n')) {
    const start = line.indexOf('{"ranks"');
    if (start >= 0) return JSON.parse(line.slice(start)) as AllreduceReport;
  }
  return null;
}

export interface JobResult {
  exitCodes: Record<NodeName, number | undefined>;
  output: Record<NodeName, string>;
  report: AllreduceReport | null;
  wallMs: number;
}

/** Runs the job on both nodes (A first, B `delayBMs` later) and waits for both. */
export async function runJob(lab: TwoNodeLab, job: JobSpec, delayBMs = 0): Promise<JobResult> {
  const started = performance.now();
  const a = startNode(lab, 'A', job);
  if (delayBMs > 0) await new Promise((resolve) => setTimeout(resolve, delayBMs));
  const b = startNode(lab, 'B', job);
  const [ra, rb] = await Promise.all([a, b]);
  const output = { A: String(ra.all ?? ''), B: String(rb.all ?? '') };
  return {
    exitCodes: { A: ra.exitCode, B: rb.exitCode },
    output,
    report: parseReport(output.A),
    wallMs: performance.now() - started,
  };
}
