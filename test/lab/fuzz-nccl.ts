/**
 * `npm run fuzz:nccl -- --seed N --layouts M [--stacks trixie,sid]`: the
 * differential fuzz (nccl-fuzz.ts) for any seed, as root, against the lab
 * roots' real NCCL and, with trixie's root, its torch 2.6's Gloo (built by
 * test/lab/lab-root.sh). Prints a line per
 * stack, then each mismatch with its layout; exit 1 when there is one.
 * test/e2e/nccl-fuzz.test.ts runs one fixed seed in the suite.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { labRoot, type Suite } from './debian-root.js';
import { describeMismatch, type FuzzStack, runFuzz } from './nccl-fuzz.js';
import { snapshotBuild } from './nccl-oracle.js';
import { Lab, netnsUnavailable } from './netns.js';

/** Each lab root's libnccl2 (test/e2e/nccl-oracle.test.ts reads the same from the roots). */
export const FUZZ_STACKS: Record<'trixie' | 'sid', string> = { trixie: '2.22.3', sid: '2.29.7' };

export function fuzzStacks(suites: readonly (keyof typeof FUZZ_STACKS)[]): FuzzStack[] {
  return suites.map((suite) => {
    const root = labRoot(suite as Suite);
    if ('error' in root) throw new Error(root.error);
    return { suite, nccl: FUZZ_STACKS[suite], root: root.path };
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      layouts: { type: 'string', default: '24' },
      stacks: { type: 'string', default: 'trixie,sid' },
    },
  });
  const seed = Number(values.seed);
  const count = Number(values.layouts);
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(count) || count < 1) {
    process.stderr.write(
      `fuzz:nccl: --seed and --layouts take whole numbers (--layouts at least 1): got --seed ${values.seed} --layouts ${values.layouts}\n`,
    );
    return 64;
  }
  if (netnsUnavailable !== null) {
    process.stderr.write(`fuzz:nccl: ${netnsUnavailable}\n`);
    return 69;
  }
  const suites = values.stacks.split(',').filter(Boolean);
  const unknown = suites.filter((suite) => !(suite in FUZZ_STACKS));
  if (unknown.length > 0) {
    process.stderr.write(
      `fuzz:nccl: --stacks: no lab root '${unknown.join(',')}': expected trixie, sid or both\n`,
    );
    return 64;
  }
  const stacks = fuzzStacks(suites as (keyof typeof FUZZ_STACKS)[]);
  const lab = new Lab('fz');
  const build = snapshotBuild();
  // Ctrl-C in a long sweep: the namespaces it made go with it (a second signal, as tsx relays
  // the terminal's, must not cut the cleanup short).
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void lab.cleanup().finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
    });
  }
  try {
    // Gloo's devices are made by the Debian 13 root's torch 2.6.
    const glooRoot = stacks.find((stack) => stack.suite === 'trixie')?.root;
    const result = await runFuzz({
      seed,
      count,
      stacks,
      build,
      lab,
      ...(glooRoot ? { glooRoot } : {}),
    });
    const labels = [...stacks.map((stack) => `${stack.suite} ${stack.nccl}`), 'Gloo (torch 2.6)'];
    for (const label of labels) {
      const mine = result.comparisons.filter((c) => c.stack === label);
      if (mine.length === 0) continue;
      process.stdout.write(
        `${label}: ${mine.length} comparisons, ${mine.filter((c) => !c.equal).length} mismatches\n`,
      );
    }
    process.stdout.write(
      `seed ${seed}: ${result.layouts} layouts, ${result.comparisons.length} comparisons, ${result.mismatches.length} mismatches, ${result.seconds.toFixed(1)} s\n`,
    );
    const outcomes = [...result.outcomes].map(([code, n]) => `${n} exit ${code}`).join(', ');
    process.stdout.write(`nccl-run with nothing set: ${outcomes}\n`);
    if (process.env.FUZZ_REFUSALS !== undefined) {
      for (const refusal of result.refusals) process.stdout.write(`  ${refusal}\n`);
    }
    for (const mismatch of result.mismatches)
      process.stdout.write(`\n${describeMismatch(mismatch)}\n`);
    return result.mismatches.length === 0 ? 0 : 1;
  } finally {
    await lab.cleanup();
    rmSync(dirname(build), { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main();
}
