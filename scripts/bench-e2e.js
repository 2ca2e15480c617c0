#!/usr/bin/env node
/**
 * Benchmark section: real torchrun (Gloo) on the two-node namespace lab
 * (test/lab/two-node.ts: data link named differently per node, 50 Mbit/s
 * management link the hostnames resolve to, docker0 on both), with torch
 * 1.13 (Debian 12) and torch 2.6 (Debian 13, in the lab's root;
 * test/lab/torch-job.ts). Issues 5 and 9 ask for the all-reduce bandwidth
 * three ways for each torch, and for torchrun's own start-up, to set
 * nccl-run's overhead against.
 *
 *   node scripts/bench-e2e.js [--runs N] [--torch 1.13|2.6]
 *     (root, dist/ built; --torch: only that torch's bandwidth rows)
 *
 * `twoNodeBench(ctx)` returns all rows of the section (bench.js sections may
 * return several); `twoNodeMeasurements` are the same one row each. Each
 * torch's bandwidth rows share one lab, as do the start-up rows: built on
 * the first call and removed when its jobs are done (also on Ctrl-C). Where
 * the lab cannot run (not root, no torchrun, no lab root) each row throws
 * the reason, which bench.js prints in place of a number.
 *
 * What is measured:
 * - bandwidth: 16 MB float32 all-reduce between the two nodes (one rank
 *   each), tensor MB per second as rank 0 times it (test/fixtures/allreduce.py),
 *   median over rounds in which the three launchers take turns, so load from
 *   elsewhere on the machine falls on all three alike;
 * - start-up (torch 1.13): wall time from spawning the launcher until its
 *   worker process runs, for a one-node job whose worker is `date +%s.%N`
 *   (torchrun's `--no_python`): what a user waits before the training
 *   script starts.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tsImport } from 'tsx/esm/api';
import { formatTable, median, memo, named } from './bench-lib.js';

const MB = 16;
/** The untuned job crawls at ~6 MB/s: one all-reduce there, thirty on the fast link. */
const ITERS = { torchrun: 1, 'hand-set': 30, 'nccl-run': 30 };
/**
 * nccl-run and the hand-set variables put Gloo on the same interface, so
 * their ratio is 1 but for noise, which on 2 shared cores is ±20% between two
 * runs: seven rounds, each a paired hand-set/nccl-run run, and the median of
 * the per-round ratios.
 */
const BANDWIDTH_ROUNDS_MAX = 7;
const STARTUP_ROUNDS_MAX = 5;
/** Each torch's jobs take ports from their own range, so a lab left over by one never collides. */
const FIRST_PORT = { 1.13: 29600, 2.6: 29800 };
const TORCHES = ['1.13', '2.6'];

async function loadLab() {
  const [twoNode, torchJob] = await Promise.all([
    tsImport('../test/lab/two-node.ts', import.meta.url),
    tsImport('../test/lab/torch-job.ts', import.meta.url),
  ]);
  return { ...twoNode, ...torchJob };
}

/** Runs `measure(lab, nodes)` on a two-node lab of its own, removed afterwards (also on Ctrl-C). */
async function onLab(torch, tag, measure) {
  const lab = await loadLab();
  const unavailable = lab.torchUnavailable(torch);
  if (unavailable !== null) throw new Error(unavailable);
  const nodes = await lab.TwoNodeLab.create(tag);
  const removeHandlers = lab.cleanupOnSignal(nodes);
  try {
    return await measure(lab, nodes);
  } finally {
    removeHandlers();
    await nodes.cleanup();
  }
}

/** One torch's bandwidth samples per launcher; memoised on ctx.shared. */
function bandwidthFigures(ctx, torch) {
  return ctx.shared(`two-node-bandwidth-${torch}`, () =>
    onLab(torch, `bench${torch.replace('.', '')}`, (lab, nodes) =>
      bandwidthRounds(lab, nodes, ctx, torch),
    ),
  );
}

/** Start-up samples per launcher (torch 1.13); memoised on ctx.shared. */
function startupFigures(ctx) {
  return ctx.shared('two-node-startup', () =>
    onLab('1.13', 'benchup', (lab, nodes) => startupRounds(lab, nodes, ctx)),
  );
}

async function bandwidthRounds(lab, nodes, ctx, torch) {
  const rounds = Math.max(1, Math.min(ctx.runs ?? 1, BANDWIDTH_ROUNDS_MAX));
  const samples = { torchrun: [], 'hand-set': [], 'nccl-run': [] };
  let port = FIRST_PORT[torch];
  for (let round = 0; round < rounds; round += 1) {
    for (const launcher of Object.keys(samples)) {
      // The slow untuned job only needs showing once; it is not in the ratio.
      if (launcher === 'torchrun' && round > 0) continue;
      port += 1;
      const report = await allreduce(lab, nodes, torch, launcher, port);
      samples[launcher].push(report.mbPerSecond);
    }
  }
  return samples;
}

async function allreduce(lab, nodes, torch, launcher, port) {
  const result = await lab.runJob(nodes, {
    torch,
    launcher,
    rendezvous: 'static',
    port,
    scriptArgs: ['--mb', String(MB), '--iters', String(ITERS[launcher])],
    ncclRunArgs: ['--log-level', 'warn', '--verify-timeout', '60s'],
    timeoutMs: 180_000,
  });
  if (result.exitCodes.A !== 0 || result.exitCodes.B !== 0 || result.report === null) {
    const tail = `${result.output.A}\n${result.output.B}`.trim().split('\n').slice(-3).join(' | ');
    throw new Error(
      `torch ${torch} ${launcher} job exited A=${result.exitCodes.A} B=${result.exitCodes.B} without a report: ${tail}`,
    );
  }
  return result.report;
}

/**
 * torchrun's own start-up against the same through nccl-run. The job runs
 * inside node A, so `--standalone`'s c10d store (port 29400) stays in the
 * lab. `--monitor_interval 0.1` only shortens torchrun's wait after the
 * worker is done; the figure stops when the worker starts.
 */
async function startupRounds(lab, nodes, ctx) {
  const rounds = Math.max(1, Math.min(ctx.runs ?? 1, STARTUP_ROUNDS_MAX));
  const trivial = [
    ...['--standalone', '--nproc_per_node', '1', '--monitor_interval', '0.1'],
    ...['--redirects', '1', '--tee', '1', '--no_python', 'date', '+%s.%N'],
  ];
  const [torchrun, ...launcherArgs] = lab.torchStack('1.13').torchrun;
  const commands = {
    torchrun: [torchrun, [...launcherArgs, ...trivial]],
    'nccl-run': [
      lab.NCCL_RUN_BIN,
      [
        '--torchrun',
        [torchrun, ...launcherArgs].join(' '),
        '--log-level',
        'warn',
        '--',
        ...trivial,
      ],
    ],
  };
  const samples = { torchrun: [], 'nccl-run': [] };
  for (let round = -1; round < rounds; round += 1) {
    for (const [launcher, [command, args]] of Object.entries(commands)) {
      const ms = await msUntilWorker(nodes, command, args);
      // Round -1 warms the file cache (torch's imports) and is not counted.
      if (round >= 0) samples[launcher].push(ms);
    }
  }
  return samples;
}

async function msUntilWorker(nodes, command, args) {
  const spawnedAt = Date.now();
  const result = await nodes.run('A', command, args, { all: true, reject: false, timeout: 60_000 });
  const stamp = /\]:(\d+\.\d+)/.exec(String(result.all));
  if (result.exitCode !== 0 || stamp === null) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.exitCode} without the worker's time`,
    );
  }
  return Number(stamp[1]) * 1000 - spawnedAt;
}

const bandwidthRow = (torch, launcher, label) => {
  const name = `torch ${torch}: Gloo all-reduce ${MB} MB, ${label}`;
  return named(name, async (ctx) => {
    const bandwidth = await bandwidthFigures(ctx, torch);
    return { name, value: median(bandwidth[launcher]), unit: 'MB/s' };
  });
};

const ratioRow = (torch) => {
  const name = `torch ${torch}: all-reduce bandwidth, nccl-run / hand-set (median of paired rounds)`;
  return named(name, async (ctx) => {
    const bandwidth = await bandwidthFigures(ctx, torch);
    const ratio = median(
      bandwidth['nccl-run'].map((mbPerSecond, round) => mbPerSecond / bandwidth['hand-set'][round]),
    );
    // Issues 5 and 9's target: through nccl-run at least 0.95 of the expert's setting.
    return { name, value: ratio, unit: 'ratio', target: { min: 0.95 } };
  });
};

/** One torch's rows: the three launchers' bandwidths and the ratio. */
const bandwidthRows = (torch) => [
  bandwidthRow(torch, 'torchrun', 'torchrun alone (hostname → 50 Mbit/s link)'),
  bandwidthRow(torch, 'hand-set', 'GLOO_SOCKET_IFNAME set by hand'),
  bandwidthRow(torch, 'nccl-run', 'through nccl-run'),
  ratioRow(torch),
];

const startupRows = [
  named('torchrun 1.13 start-up to worker, 1 node, median', async (ctx) => {
    const startup = await startupFigures(ctx);
    const name = 'torchrun 1.13 start-up to worker, 1 node, median';
    return { name, value: median(startup.torchrun), unit: 'ms' };
  }),
  named('nccl-run + torchrun 1.13 start-up to worker, median', async (ctx) => {
    const startup = await startupFigures(ctx);
    const name = 'nccl-run + torchrun 1.13 start-up to worker, median';
    return { name, value: median(startup['nccl-run']), unit: 'ms' };
  }),
  named('nccl-run added to torchrun 1.13 start-up', async (ctx) => {
    const startup = await startupFigures(ctx);
    const name = 'nccl-run added to torchrun 1.13 start-up';
    return {
      name,
      value: median(startup['nccl-run']) - median(startup.torchrun),
      unit: 'ms',
    };
  }),
];

export const twoNodeMeasurements = [...TORCHES.flatMap(bandwidthRows), ...startupRows];

/**
 * The whole section at once, for bench.js (a section may return several
 * rows): every row above, or the reason the lab cannot run as the error.
 */
export async function twoNodeBench(ctx) {
  const rows = [];
  for (const measure of twoNodeMeasurements) rows.push(await measure(ctx));
  return rows;
}

async function main() {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '3' }, torch: { type: 'string' } },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`--runs: expected a whole number of runs >= 1, got "${values.runs}"`);
  }
  if (values.torch !== undefined && !TORCHES.includes(values.torch)) {
    throw new Error(`--torch: expected one of ${TORCHES.join(', ')}, got "${values.torch}"`);
  }
  const ctx = { runs, root: fileURLToPath(new URL('..', import.meta.url)), shared: memo() };
  const measurements =
    values.torch === undefined ? twoNodeMeasurements : bandwidthRows(values.torch);
  const rows = [];
  for (const measure of measurements) {
    try {
      rows.push(await measure(ctx));
    } catch (error) {
      rows.push({ name: measure.name, error: String(error.message ?? error).split('\n')[0] });
    }
  }
  console.log(formatTable(rows));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
