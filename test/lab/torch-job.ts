/**
 * One multi-node job on the two-node lab: real torchrun (Gloo) on both nodes
 * running test/fixtures/allreduce.py, with the torch a job names:
 *
 * - `'1.13'`: Debian 12's python3-torch (torchrun 1.13), the host's own
 *   /usr/bin/torchrun on a Debian 12 machine;
 * - `'2.6'`: Debian 13's python3-torch (torchrun 2.6), run inside the lab's
 *   Debian 13 root (debian-root.ts) through torchrun-in-root.sh.
 *
 * (lab-root.sh decides which of the two is the host itself.) Each job is
 * started three ways:
 *
 * - `torchrun`: torchrun alone, as an untuned user runs it;
 * - `hand-set`: torchrun with GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME set per
 *   node to its data interface, as an expert would;
 * - `nccl-run`: `bin/nccl-run --torchrun LAUNCHER` in front of the same
 *   torchrun argv; nccl-run runs on the host side (there is no Node in the
 *   root), and the launcher it execs enters the root.
 *
 * All three start torchrun with the same command, so their figures compare
 * launchers, not wrappers. Used by the e2e tests, the demo and the bench, so
 * all of them measure the same thing.
 */
import { fileURLToPath } from 'node:url';
import type { Options as ExecaOptions } from 'execa';
import { labRoot, type Suite, torch26Env } from './debian-root.js';
import type { NodeName, TwoNodeLab } from './two-node.js';

export const ALLREDUCE_SCRIPT = fileURLToPath(new URL('../fixtures/allreduce.py', import.meta.url));
/** The shell entry users run: its Node half decides, then it execs the launcher (SPEC "Launch"). */
export const NCCL_RUN_BIN = fileURLToPath(new URL('../../bin/nccl-run', import.meta.url));
/** Enters a Debian root and execs its torchrun (see the script). */
export const TORCHRUN_IN_ROOT = fileURLToPath(new URL('./torchrun-in-root.sh', import.meta.url));
/** The single executable `npm run release` writes: run inside the root, where no Node.js is. */
export const SINGLE_EXECUTABLE = fileURLToPath(
  new URL('../../release/nccl-run-linux-x64', import.meta.url),
);

export type TorchVersion = '1.13' | '2.6' | '2.14';

/** The Debian release that packages each torch (LAB.md). */
const SUITE: Record<TorchVersion, Suite> = { '1.13': 'bookworm', '2.6': 'trixie', '2.14': 'sid' };

/** How a lab node starts one torch's torchrun. */
export interface TorchStack {
  readonly version: TorchVersion;
  /** The launcher command, before torchrun's own arguments; also nccl-run's `--torchrun` words. */
  readonly torchrun: readonly string[];
  /** What the lab's torchrun needs in its environment (torch 2.6: the libuv workaround). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The options it needs before any other: `--redirects 1 --tee 1` works
   * around torchrun 1.13's Python 3.11 crash at worker start (LAB.md).
   */
  readonly options: readonly string[];
}

const stacks = new Map<TorchVersion, TorchStack | { unavailable: string }>();

function stackOrReason(version: TorchVersion): TorchStack | { unavailable: string } {
  const known = stacks.get(version);
  if (known) return known;
  let found: TorchStack | { unavailable: string };
  if (process.getuid?.() !== 0) {
    found = { unavailable: 'the two-node lab needs root for network namespaces (CI runs as root)' };
  } else {
    const root = labRoot(SUITE[version]);
    found =
      'error' in root
        ? { unavailable: root.error }
        : {
            version,
            torchrun: root.path === '/' ? ['/usr/bin/torchrun'] : [TORCHRUN_IN_ROOT, root.path],
            // LAB WORKAROUND (debian-root.ts torch26Env): Debian's torch 2.6
            // and 2.14 are built without libuv; torch 1.13 predates libuv stores.
            env: version === '1.13' ? {} : torch26Env,
            options: version === '1.13' ? ['--redirects', '1', '--tee', '1'] : [],
          };
  }
  stacks.set(version, found);
  return found;
}

/**
 * Why a torch's tier cannot run here, or null when it can. The first call
 * per version may build the lab root (minutes, once per machine).
 */
export function torchUnavailable(version: TorchVersion): string | null {
  const stack = stackOrReason(version);
  return 'unavailable' in stack ? stack.unavailable : null;
}

/** The stack of a torch; throws the reason when its tier cannot run here. */
export function torchStack(version: TorchVersion): TorchStack {
  const stack = stackOrReason(version);
  if ('unavailable' in stack) throw new Error(`torch ${version}: ${stack.unavailable}`);
  return stack;
}

export type Launcher = 'torchrun' | 'hand-set' | 'nccl-run' | 'single-executable';
export type Rendezvous = 'static' | 'c10d';

export interface JobSpec {
  torch: TorchVersion;
  launcher: Launcher;
  rendezvous: Rendezvous;
  /** Master / rendezvous port. */
  port: number;
  /** Arguments of allreduce.py (e.g. ['--mb', '16']). */
  scriptArgs: readonly string[];
  /** The master / c10d endpoint host (default: node A's data address). */
  endpointHost?: string;
  /**
   * c10d: give node A `--rdzv-conf is_host=1` (default true). The endpoint
   * is A's data address, which torch's store-host rule does not recognise
   * (see torchrunArgs); false leaves the decision to that rule.
   */
  isHostOnA?: boolean;
  /** More torchrun options, on both nodes, before the script. */
  torchrunOptions?: readonly string[];
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
  /** The MASTER_ADDR torchrun gave the workers. */
  masterAddr: string | null;
  hostname: string;
  /** torch.__version__ of the workers, e.g. "2.6.0". */
  torch: string;
}

/**
 * The spellings of one torch's torchrun: 1.13 knows only the underscore
 * ones (`--node_rank`), 2.x both; the 2.6 jobs use the dash ones, which are
 * what its documentation and users write, so nccl-run reads both against a
 * real torchrun.
 */
const SPELLING: Record<TorchVersion, (dest: string) => string> = {
  '1.13': (dest) => `--${dest}`,
  '2.6': (dest) => `--${dest.replaceAll('_', '-')}`,
  '2.14': (dest) => `--${dest.replaceAll('_', '-')}`,
};

/** torchrun's argv for one node (its options, the script, the script's arguments). */
export function torchrunArgs(lab: TwoNodeLab, node: NodeName, job: JobSpec): string[] {
  const option = SPELLING[job.torch];
  const host = job.endpointHost ?? lab.a.dataAddress;
  const common = [
    ...[option('nnodes'), '2', option('nproc_per_node'), '1'],
    ...torchStack(job.torch).options,
  ];
  const rendezvous =
    job.rendezvous === 'static'
      ? [
          ...[option('node_rank'), node === 'A' ? '0' : '1'],
          ...[option('master_addr'), host, option('master_port'), String(job.port)],
        ]
      : [
          ...[option('rdzv_backend'), 'c10d', option('rdzv_endpoint'), `${host}:${job.port}`],
          ...[option('rdzv_id'), 'e2e'],
          // torchrun hosts the c10d store only where the endpoint matches the
          // hostname or its addresses (rendezvous/utils.py
          // _matches_machine_hostname, 1.13 and 2.6); the data address is
          // neither, so the master node says so, as a user on such a
          // cluster must.
          ...(node === 'A' && (job.isHostOnA ?? true) ? [option('rdzv_conf'), 'is_host=1'] : []),
        ];
  return [
    ...common,
    ...rendezvous,
    ...(job.torchrunOptions ?? []),
    ALLREDUCE_SCRIPT,
    ...job.scriptArgs,
  ];
}

/** The command line a node runs for this job. */
export function nodeCommand(lab: TwoNodeLab, node: NodeName, job: JobSpec): [string, string[]] {
  const [launcher = '', ...launcherArgs] = torchStack(job.torch).torchrun;
  const args = torchrunArgs(lab, node, job);
  if (job.launcher === 'single-executable') {
    // nccl-run itself in the torch's root (a stack that has one), its launcher the root's torchrun.
    if (launcher !== TORCHRUN_IN_ROOT) throw new Error(`torch ${job.torch} has no lab root`);
    return [
      launcher,
      [
        ...[...launcherArgs, '--exec', SINGLE_EXECUTABLE, '--torchrun', '/usr/bin/torchrun'],
        ...(job.ncclRunArgs ?? []),
        ...args,
      ],
    ];
  }
  if (job.launcher !== 'nccl-run') return [launcher, [...launcherArgs, ...args]];
  // No `--`: nccl-run is a drop-in prefix, its options end at torchrun's first.
  // Its --torchrun value is split into words without a shell (SPEC), hence
  // a launcher that is a command and not a shell snippet.
  return [
    NCCL_RUN_BIN,
    ['--torchrun', [launcher, ...launcherArgs].join(' '), ...(job.ncclRunArgs ?? []), ...args],
  ];
}

/** What `nccl-run explain --json` says (SPEC "Outputs"), as far as the lab's tests read it. */
export interface Explained {
  decision: { interface: string; address: string } | null;
  env: Record<string, string>;
  warnings: string[];
}

/** `nccl-run explain --json` on a node for the job's torchrun argv: nccl-run's view, nothing launched. */
export async function explainJob(
  lab: TwoNodeLab,
  node: NodeName,
  job: JobSpec,
): Promise<Explained> {
  const { stdout } = await lab.run(
    node,
    NCCL_RUN_BIN,
    ['explain', '--json', '--log-level', 'silent', ...torchrunArgs(lab, node, job)],
    { timeout: 30_000 },
  );
  return JSON.parse(String(stdout)) as Explained;
}

/** Starts one node's side of the job; the promise resolves with its result, never rejects. */
export function startNode(
  lab: TwoNodeLab,
  node: NodeName,
  job: JobSpec,
  options: ExecaOptions = {},
) {
  const env: Record<string, string> = { ...torchStack(job.torch).env, ...job.env };
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

/** The JSON line rank 0 printed (torchrun 1.13's --tee prefixes it with `[default0]:`). */
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
  /** Rank 0's report, from whichever node the rendezvous made rank 0. */
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
    report: parseReport(output.A) ?? parseReport(output.B),
    wallMs: performance.now() - started,
  };
}
