#!/usr/bin/env node
/**
 * Start-up of the one-file bundle (dist/nccl-run.mjs, what Dockerfile.example
 * copies) against tsc's output loaded module by module (dist/cli/entry.js):
 * the median wall time of `--dry-run --iface lo --verify none` (the whole
 * plan: options, host facts, decision, variables; no launch, no network
 * wait), run alternately so that machine noise hits both alike. The bundle
 * runs from an empty temporary folder, as in a container. (bin/nccl-run.js
 * runs the split build, measured by bench.js's own dry-run rows.)
 *
 * `benchBundle()` returns rows for scripts/bench.js; run alone it prints them.
 * The tsc build must exist (npm run build).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundle } from './bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ARGS = ['--dry-run', '--iface', 'lo', '--verify', 'none'];

/** tsc's output, loaded module by module from its entry. */
const TSC_ENTRY = [join(root, 'dist/cli/entry.js')];

function timeOnce(nodeArgs, cwd) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [...nodeArgs, ...ARGS], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(
      `node ${nodeArgs.join(' ')} ${ARGS.join(' ')} exited ${result.status}: ${result.stderr}`,
    );
  }
  return ms;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (ms) => Math.round(ms * 10) / 10;

/** Rows `{ name, value, unit }`; `runs` timed runs of each, after one warm-up run each. */
export async function benchBundle({ runs = 20 } = {}) {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  }
  const buildDir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-build-'));
  const runDir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-run-'));
  try {
    const { outfile, bytes } = await bundle({ outfile: join(buildDir, 'nccl-run.mjs') });
    const single = [join(runDir, 'nccl-run.mjs')];
    copyFileSync(outfile, single[0]);

    timeOnce(TSC_ENTRY, runDir);
    timeOnce(single, runDir);
    const normalMs = [];
    const singleMs = [];
    for (let i = 0; i < runs; i++) {
      normalMs.push(timeOnce(TSC_ENTRY, runDir));
      singleMs.push(timeOnce(single, runDir));
    }
    const normalMedian = median(normalMs);
    const singleMedian = median(singleMs);
    return [
      {
        name: `start-up, tsc output dist/cli/entry.js (module by module), median of ${runs}`,
        value: round(normalMedian),
        unit: 'ms',
      },
      {
        name: `start-up, one-file bundle dist/nccl-run.mjs, median of ${runs}`,
        value: round(singleMedian),
        unit: 'ms',
      },
      {
        name: 'start-up, bundle / tsc output',
        value: Math.round((singleMedian / normalMedian) * 100) / 100,
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
