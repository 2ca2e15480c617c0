#!/usr/bin/env node
/**
 * Start-up of the one-file bundle (dist/nccl-run.mjs, what Dockerfile.example
 * copies) against tsc's output loaded module by module (dist/cli/entry.js):
 * the median wall time of `--dry-run --iface lo --verify none` (the whole
 * plan: options, host facts, decision, variables; no launch, no network
 * wait), interleaved so that machine noise hits both alike. The bundle runs
 * from an empty temporary folder, as in a container. (bin/nccl-run.js runs
 * the split build, measured by bench.js's own dry-run rows.)
 *
 * `benchBundle()` returns rows for scripts/bench.js; run alone it prints them.
 * The tsc build must exist (npm run build).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { interleavedWallTimes, median } from './bench-lib.js';
import { bundle } from './bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ARGS = ['--dry-run', '--iface', 'lo', '--verify', 'none'];
const TSC_ENTRY = join(root, 'dist/cli/entry.js');

const round = (ms) => Math.round(ms * 10) / 10;

/** Rows `{ name, value, unit }`; `runs` timed runs of each, after one warm-up run each. */
export async function benchBundle({ runs = 20 } = {}) {
  if (!existsSync(TSC_ENTRY)) throw new Error(`${TSC_ENTRY} is missing: run npm run build first`);
  const buildDir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-build-'));
  const runDir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-run-'));
  try {
    const { outfile, bytes } = await bundle({ outfile: join(buildDir, 'nccl-run.mjs') });
    const single = join(runDir, 'nccl-run.mjs');
    copyFileSync(outfile, single);
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const [tsc, bundled] = interleavedWallTimes(
      [
        [process.execPath, TSC_ENTRY, ...ARGS],
        [process.execPath, single, ...ARGS],
      ],
      runs,
      { cwd: runDir, env },
    ).map(median);
    return [
      {
        name: `start-up, tsc output dist/cli/entry.js (module by module), median of ${runs}`,
        value: round(tsc),
        unit: 'ms',
      },
      {
        name: `start-up, one-file bundle dist/nccl-run.mjs, median of ${runs}`,
        value: round(bundled),
        unit: 'ms',
      },
      {
        name: 'start-up, bundle / tsc output',
        value: Math.round((bundled / tsc) * 100) / 100,
        unit: 'x',
      },
      { name: 'one-file bundle size', value: Math.round(bytes / 1024), unit: 'KiB' },
    ];
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
    rmSync(runDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await benchBundle())
    process.stdout.write(`${row.name}: ${row.value} ${row.unit}\n`);
}
