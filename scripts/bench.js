#!/usr/bin/env node
/**
 * nccl-run's benchmark (not a test), measured on this machine in one run.
 *   node scripts/bench.js [--runs N] [--only REGEX]   (npm run bench builds the release first;
 *   --only runs the sections whose name matches)
 * Prints a table and writes bench-results/bench.json.
 *
 * Sections: `measurements` below is the list. Add an async function
 * (ctx) => Result or Result[], Result = { name, value, unit, target? },
 * wrapped in named() so a failure is labelled; a section in its own file
 * (scripts/bench-*.js) is imported inside its function, so one that cannot
 * load (no build yet) fails its own row and not the others. Helpers in
 * bench-lib.js. ctx: { runs, root, shared }, where shared(key, compute)
 * runs `compute` once per key for measurements derived from the same runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  DRY_RUN_ARGS,
  formatTable,
  importCost,
  interleavedWallTimes,
  median,
  memo,
  named,
  timeOnce,
} from './bench-lib.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const BARE_NODE = [process.execPath, '-e', '0'];
// The command users run: bin/nccl-run, the shell that runs the Node half and then execs.
const NCCL_RUN = join(root, 'bin/nccl-run');
const NCCL_RUN_DRY = [NCCL_RUN, ...DRY_RUN_ARGS];

/**
 * Both start-ups from one interleaved series, shared by the three results
 * below. Until nccl-run's dry run works, bare Node is still measured alone.
 */
function startupMedians(ctx) {
  return ctx.shared('startup', async () => {
    // PATH and HOME only, as a user's shell has them: a NODE_EXTRA_CA_CERTS, as
    // this machine sets, costs Node ~90 ms at every start and hides nccl-run's own.
    const options = {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    };
    try {
      timeOnce(NCCL_RUN_DRY, options);
    } catch (ncclRunError) {
      const [bare] = interleavedWallTimes([BARE_NODE], ctx.runs, options);
      return { bare: median(bare), ncclRunError };
    }
    const [bare, ncclRun] = interleavedWallTimes([BARE_NODE, NCCL_RUN_DRY], ctx.runs, options);
    // Paired: each round's two runs saw the same moment of a shared machine.
    const ratios = ncclRun.map((time, round) => time / bare[round]);
    return { bare: median(bare), ncclRun: median(ncclRun), ratio: median(ratios) };
  });
}

async function ncclRunMedians(ctx) {
  const medians = await startupMedians(ctx);
  if (medians.ncclRunError !== undefined) throw medians.ncclRunError;
  return medians;
}

// What each runtime dependency adds to a cold start (yargs, zod, pino, dotenv,
// and pino-pretty, which log.ts loads for the text log lines, the default).
const DEPENDENCIES = ['yargs', 'zod', 'pino', 'pino-pretty', 'dotenv'];

export const measurements = [
  named('node -e 0, median wall time', async (ctx) => {
    const { bare } = await startupMedians(ctx);
    return { name: 'node -e 0, median wall time', value: bare, unit: 'ms' };
  }),
  named('nccl-run --dry-run, median wall time', async (ctx) => {
    const { ncclRun } = await ncclRunMedians(ctx);
    return { name: 'nccl-run --dry-run, median wall time', value: ncclRun, unit: 'ms' };
  }),
  named('nccl-run overhead over node -e 0', async (ctx) => {
    const { bare, ncclRun } = await ncclRunMedians(ctx);
    return { name: 'nccl-run overhead over node -e 0', value: ncclRun - bare, unit: 'ms' };
  }),
  named('nccl-run --dry-run / node -e 0', async (ctx) => {
    const { ratio } = await ncclRunMedians(ctx);
    // Issue 14's target, a ratio because this machine's speed drifts with the hour.
    const name = 'nccl-run --dry-run / node -e 0, median of paired runs';
    return { name, value: ratio, unit: 'x', target: { max: 1.5 } };
  }),
  named('explain --json on 1,000 interfaces', async (ctx) => {
    // The target: at most 50 ms beyond nccl-run's own start-up, which
    // here is the same command on a 7-interface snapshot (same code path).
    const explain = (facts) => [
      NCCL_RUN,
      'explain',
      '--json',
      '--log-level',
      'silent',
      '--facts',
      join(root, 'test/fixtures/facts', facts),
      '--nnodes=2',
      '--node_rank=1',
      '--master_addr=198.18.20.5',
      'train.py',
    ];
    const [small, large] = interleavedWallTimes(
      [explain('docker-host.json'), explain('k8s-node-1000.json')],
      ctx.runs,
      { cwd: root },
    );
    return [
      { name: 'explain --json, 7-interface snapshot', value: median(small), unit: 'ms' },
      { name: 'explain --json, 1,000-interface snapshot', value: median(large), unit: 'ms' },
      {
        name: 'resolution time for 1,000 interfaces beyond start-up',
        value: median(large) - median(small),
        unit: 'ms',
        target: { max: 50 },
      },
    ];
  }),
  named('reading 1,001 real interfaces', async () => {
    const { benchHost } = await import('./bench-host.js');
    return benchHost();
  }),
  named('the readiness step: read + assess', async (ctx) => {
    const { benchReadiness } = await import('./bench-readiness.js');
    return benchReadiness(ctx);
  }),
  named('--verify peers at 256, 1,024, 4,096 and 16,384 nodes on loopback', async (ctx) => {
    const { peerProbeBench } = await import('./bench-peers.js');
    return peerProbeBench(ctx);
  }),
  named('one-file bundle start-up', async (ctx) => {
    const { benchBundle } = await import('./bench-bundle.js');
    return benchBundle(ctx);
  }),
  named('the release: single executable start-up, a whole job through it, sizes', async (ctx) => {
    const { benchRelease } = await import('./bench-release.js');
    return benchRelease(ctx);
  }),
  named('two-node lab: Gloo all-reduce (torch 1.13, 2.6) and torchrun start-up', async (ctx) => {
    const { twoNodeBench } = await import('./bench-e2e.js');
    return twoNodeBench(ctx);
  }),
  named('--verify collective against a bare torchrun job, 2 nodes (torch 1.13)', async (ctx) => {
    const { benchCollective } = await import('./bench-collective.js');
    return benchCollective(ctx);
  }),
  ...DEPENDENCIES.map((dependency) => {
    const name = `import('${dependency}'), median CPU time`;
    return named(name, async (ctx) => ({
      name,
      value: importCost(dependency, ctx.runs, { cwd: root }),
      unit: 'ms CPU',
    }));
  }),
];

/** Runs every measurement in order; one that throws becomes a row with its error, never a number. */
export async function runBench({ runs, only = null }) {
  const ctx = { runs, root, shared: memo() };
  const rows = [];
  for (const measure of measurements.filter((m) => only === null || only.test(m.name))) {
    try {
      rows.push(...[await measure(ctx)].flat());
    } catch (error) {
      rows.push({ name: measure.name, error: String(error.message ?? error).split('\n')[0] });
    }
  }
  return rows;
}

async function main() {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '30' }, only: { type: 'string' } },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`--runs: expected a whole number of runs >= 1, got "${values.runs}"`);
  }
  // --only REGEX: the sections whose name matches, to re-measure one change's cost.
  const only = values.only === undefined ? null : new RegExp(values.only, 'i');
  const rows = await runBench({ runs, only });
  console.log(formatTable(rows));
  const out = join(root, 'bench-results/bench.json');
  mkdirSync(dirname(out), { recursive: true });
  const machine = {
    node: process.version,
    platform: process.platform,
    cpus: (await import('node:os')).cpus().length,
  };
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), runs, machine, results: rows }, null, 2)}\n`,
  );
  console.log(`\nwritten to ${out}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
