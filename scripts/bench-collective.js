#!/usr/bin/env node
/**
 * Benchmark section: what `--verify collective` costs (issue 44), on the
 * collective lab (test/lab/collective-lab.ts: nodes in namespaces on one
 * bridge), real torchrun 1.13 (Gloo), two nodes of one rank each, against a
 * bare torchrun job of the same shape and variables (test/fixtures/allreduce.py, one
 * small all-reduce: launcher start, torch import, group init, a collective,
 * exit), side by side: each round runs the bare job, then `nccl-run check
 * --verify collective` for the same shape, so load from elsewhere on the
 * machine falls on both alike. The ratio is the median of the rounds'
 * ratios; the goal is at most 3x at 2 nodes.
 *
 * The check's parts come from node A's `check --json` (`collective.phases`):
 * the launcher's start and torchrun's rendezvous (what the miniature's run
 * took beside its program), the interpreter's torch import, the group's
 * init, the collective (all-reduce sizes and the ring pass), the reading
 * of the results and NCCL's files, and the last barrier. The check's wall
 * time also holds what every check does before (the plan, the peers round).
 *
 *   node scripts/bench-collective.js [--runs N]   (root, dist/ built)
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tsImport } from 'tsx/esm/api';
import { formatTable, median, memo } from './bench-lib.js';

const ROUNDS_MAX = 3;
const FIRST_PORT = 29650;

async function loadLab() {
  const [collectiveLab, torchJob] = await Promise.all([
    tsImport('../test/lab/collective-lab.ts', import.meta.url),
    tsImport('../test/lab/torch-job.ts', import.meta.url),
  ]);
  return { ...collectiveLab, ...torchJob };
}

/** Wall time (ms) until every node's command has exited, and each node's result. */
async function onBothNodes(start) {
  const began = performance.now();
  const runs = await Promise.all(['col-a', 'col-b'].map(start));
  const elapsed = performance.now() - began;
  for (const run of runs) {
    if (run.code !== 0) {
      const tail = run.stderr.trim().split('\n').slice(-3).join(' | ');
      throw new Error(`a node exited ${run.code}: ${tail}`);
    }
  }
  return { elapsed, runs };
}

async function rounds(ctx) {
  const lab = await loadLab();
  const unavailable = lab.torchUnavailable('1.13');
  if (unavailable !== null) throw new Error(unavailable);
  const stack = lab.torchStack('1.13');
  const nodes = await lab.CollectiveLab.create(2);
  const samples = { bare: [], check: [], ratio: [], phases: [] };
  try {
    // The bare job gets the variables nccl-run would set (nccl-run env), as an
    // expert sets them by hand: without PET_LOCAL_ADDR torch's agent asks the
    // resolver for its FQDN, which in the lab's namespaces costs seconds, and
    // the ratio would credit nccl-run with a trap it removes.
    const exported = {};
    for (const node of ['col-a', 'col-b']) {
      const job = { nodes: 2, rendezvous: 'static', port: FIRST_PORT };
      const printed = await nodes.run(node, stack, [
        ...['env', '--format', 'json', '--log-level', 'warn', '--verify', 'none'],
        ...['--torchrun', stack.torchrun.join(' ')],
        ...lab.jobOptions(nodes, stack, node, job),
        'train.py',
      ]);
      if (printed.code !== 0) throw new Error(`nccl-run env on ${node}: ${printed.stderr.trim()}`);
      exported[node] = JSON.parse(printed.stdout);
    }
    let port = FIRST_PORT;
    for (let round = 0; round < Math.max(1, Math.min(ctx.runs ?? 1, ROUNDS_MAX)); round += 1) {
      const job = { nodes: 2, rendezvous: 'static', port };
      const checkPort = port + 1;
      port += 2;
      const bareJob = () =>
        onBothNodes((node) =>
          nodes.runCommand(
            node,
            stack,
            [
              ...stack.torchrun,
              ...lab.jobOptions(nodes, stack, node, job),
              lab.ALLREDUCE_SCRIPT,
              ...['--mb', '1', '--iters', '1'],
            ],
            { env: exported[node] },
          ),
        );
      const checkJob = () =>
        onBothNodes((node) =>
          nodes.run(node, stack, [
            ...['check', '--json', '--log-level', 'warn', '--verify', 'collective'],
            ...['--torchrun', stack.torchrun.join(' ')],
            ...lab.jobOptions(nodes, stack, node, { ...job, port: checkPort }),
            'train.py',
          ]),
        );
      // Turn about, so that neither always meets a cold page cache or the other's leftovers.
      const [bare, check] =
        round % 2 === 0
          ? [await bareJob(), await checkJob()]
          : await checkJob().then(async (first) => [await bareJob(), first]);
      samples.bare.push(bare.elapsed);
      samples.check.push(check.elapsed);
      samples.ratio.push(check.elapsed / bare.elapsed);
      samples.phases.push(JSON.parse(check.runs[0].stdout).collective.phases);
    }
  } finally {
    await nodes.cleanup();
  }
  return samples;
}

export async function benchCollective(ctx) {
  const samples = await (ctx.shared ?? memo())('collective', () => rounds(ctx));
  const phase = (key) => median(samples.phases.map((phases) => phases[key] * 1_000));
  return [
    {
      name: 'bare torchrun job, 2 nodes x 1 rank (torch 1.13)',
      value: median(samples.bare),
      unit: 'ms',
    },
    { name: 'check --verify collective, same shape', value: median(samples.check), unit: 'ms' },
    {
      name: 'check --verify collective / bare job, median of paired rounds',
      value: median(samples.ratio),
      unit: 'x',
      target: { max: 3 },
    },
    { name: 'collective: launcher start and rendezvous', value: phase('launchS'), unit: 'ms' },
    { name: 'collective: interpreter and torch import', value: phase('importS'), unit: 'ms' },
    { name: 'collective: group init', value: phase('initS'), unit: 'ms' },
    {
      name: 'collective: all-reduce sizes and ring pass',
      value: median(samples.phases.map((p) => (p.allReduceS + p.ringS) * 1_000)),
      unit: 'ms',
    },
    { name: 'collective: reading results and NCCL files', value: phase('readS'), unit: 'ms' },
    { name: 'collective: last barrier', value: phase('barrierS'), unit: 'ms' },
    { name: 'collective: whole (miniature to barrier)', value: phase('totalS'), unit: 'ms' },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  benchCollective({ runs: Number(values.runs), shared: memo() })
    .then((rows) => console.log(formatTable(rows)))
    .catch((error) => {
      console.error(error.message);
      process.exitCode = 1;
    });
}
