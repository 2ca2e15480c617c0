#!/usr/bin/env node
/**
 * Start-up of each way nccl-run's Node half can be built, for issue 14's
 * steps: the one-file ESM bundle (dist/nccl-run.mjs, what Dockerfile.example
 * copies), the same program as one CommonJS file compiled without a code
 * cache, and with V8's code cache as bin/nccl-run.cjs loads it. Each runs
 * `--dry-run --iface lo --verify none` (the whole plan: options, host facts,
 * decision, variables; no launch, no network wait) from an empty temporary
 * folder, interleaved with `node -e 0` so that machine noise hits all alike;
 * each figure is the median of its per-round ratio to bare Node.
 *
 * `benchBundle()` returns rows for scripts/bench.js; run alone it prints them.
 * Needs the build (npm run build).
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DRY_RUN_ARGS as ARGS, interleavedWallTimes, median } from './bench-lib.js';
import { bundle } from './bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CJS_PROGRAM = join(root, 'dist/bin/nccl-run.cjs');
const LOADER = join(root, 'bin/nccl-run.cjs');

const round = (value, digits) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Rows `{ name, value, unit }`; `runs` timed rounds. */
export async function benchBundle({ runs = 20 } = {}) {
  if (!existsSync(CJS_PROGRAM)) throw new Error(`${CJS_PROGRAM} is missing: run npm run build`);
  const dir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-builds-'));
  try {
    const { outfile, bytes } = await bundle({ outfile: join(dir, 'nccl-run.mjs') });
    // The CommonJS program started by Node's own loader: no code cache.
    const uncached = join(dir, 'uncached.cjs');
    writeFileSync(uncached, `require(${JSON.stringify(CJS_PROGRAM)}).start();\n`);
    const runDir = join(dir, 'run');
    copyFileSync(outfile, join(dir, 'single.mjs'));
    const builds = [
      ['one-file ESM bundle (Dockerfile.example)', [process.execPath, join(dir, 'single.mjs')]],
      ['one CommonJS file, no code cache', [process.execPath, uncached]],
      ['one CommonJS file with V8 code cache (bin/)', [process.execPath, LOADER]],
    ];
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const [bare, ...times] = interleavedWallTimes(
      [[process.execPath, '-e', '0'], ...builds.map(([, command]) => [...command, ...ARGS])],
      runs,
      { cwd: dirname(runDir), env },
    );
    return [
      ...builds.flatMap(([label], i) => [
        {
          name: `start-up, ${label}, median of ${runs}`,
          value: round(median(times[i]), 1),
          unit: 'ms',
        },
        {
          name: `start-up, ${label} / node -e 0, paired`,
          value: round(median(times[i].map((time, r) => time / bare[r])), 2),
          unit: 'x',
        },
      ]),
      { name: 'one-file bundle size', value: Math.round(bytes / 1024), unit: 'KiB' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await benchBundle())
    process.stdout.write(`${row.name}: ${row.value} ${row.unit}\n`);
}
