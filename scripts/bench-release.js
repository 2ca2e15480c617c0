#!/usr/bin/env node
/**
 * The artifacts of `npm run release`, measured (issue 35's figures):
 * - the single executable's start-up: its `--dry-run --iface lo --verify
 *   none` against `node -e 0` of the very Node it embeds, interleaved, the
 *   median of the per-round ratios (PATH and HOME only, as bench.js);
 * - a whole single-node job through it against torchrun alone: Debian's
 *   torchrun 1.13 (`--standalone`, one worker that exits at once), paired
 *   rounds, the median ratio;
 * - each artifact's size, and each binary's size under xz -6.
 *
 * `benchRelease()` returns rows for scripts/bench.js; run alone it prints them.
 * Needs `npm run release`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DRY_RUN_ARGS, interleavedWallTimes, median } from './bench-lib.js';
import { officialNode } from './official-node.js';
import { PLATFORMS, RELEASE_DIR } from './release.js';

const BINARY = join(RELEASE_DIR, PLATFORMS.x64.binary);
const TORCHRUN = '/usr/bin/torchrun';
const MIB = 2 ** 20;

/** Per-round ratios of the second command's wall time to the first's, and both medians. */
function paired(commands, runs, options) {
  const [base, measured] = interleavedWallTimes(commands, runs, options);
  const ratios = measured.map((ms, round) => ms / base[round]);
  return { base: median(base), measured: median(measured), ratio: median(ratios) };
}

/** Rows `{ name, value, unit, target? }`; `runs` timed rounds. */
export async function benchRelease({ runs = 20 } = {}) {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run release`);
  const dir = mkdtempSync(join(tmpdir(), 'nccl-run-bench-release-'));
  try {
    const options = { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir } };
    const node = officialNode('x64');
    const dry = [BINARY, ...DRY_RUN_ARGS];
    const start = paired([[node, '-e', '0'], dry], runs, options);
    const rows = [
      { name: `single executable --dry-run, median wall time`, value: start.measured, unit: 'ms' },
      {
        name: `single executable --dry-run / node -e 0 of its Node, median of paired runs`,
        value: start.ratio,
        unit: 'x',
        target: { max: 1.5 },
      },
    ];
    if (existsSync(TORCHRUN)) {
      const script = join(dir, 'job.py');
      writeFileSync(script, 'import torch.distributed\n');
      // torchrun 1.13 on Python 3.11 needs --redirects 1 --tee 1 (LAB.md).
      const job = ['--standalone', '--nproc_per_node=1', '--redirects', '1', '--tee', '1', script];
      const whole = paired(
        [
          [TORCHRUN, ...job],
          [BINARY, '--verify', 'none', '--log-level', 'silent', ...job],
        ],
        // A job takes seconds and varies by some per cent: 12 pairs at least (5 read 1.034, 12 1.009).
        Math.max(12, Math.ceil(runs / 2)),
        options,
      );
      rows.push(
        {
          name: 'single-node job, torchrun 1.13 alone, median wall time',
          value: whole.base,
          unit: 'ms',
        },
        {
          name: 'the same job through the single executable / torchrun alone, median of paired runs',
          value: whole.ratio,
          unit: 'x',
          target: { max: 1.03 },
        },
      );
    }
    for (const name of readdirSync(RELEASE_DIR)
      .filter((file) => file !== 'SHA256SUMS')
      .sort()) {
      const file = join(RELEASE_DIR, name);
      rows.push({ name: `size: ${name}`, value: statSync(file).size / MIB, unit: 'MiB' });
      if (name.startsWith('nccl-run-linux-')) {
        const packed = execFileSync('xz', ['-6', '-T2', '-c', file], { maxBuffer: 512 * MIB });
        rows.push({ name: `size: ${name}, xz -6`, value: packed.length / MIB, unit: 'MiB' });
      }
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await benchRelease()) {
    console.log(`${row.name}: ${row.value.toFixed(row.unit === 'x' ? 3 : 1)} ${row.unit}`);
  }
}
