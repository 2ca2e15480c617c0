/**
 * Timing helpers for scripts/bench.js and the sections others add to it.
 * Numbers come only from runs made here and now; a command that fails makes
 * its measurement fail, it never yields a number.
 *
 * A measurement is an async function (ctx) => Result, where Result is
 *   { name: string, value: number, unit: string, target?: { max?: number, min?: number } }
 * and `target` says what the issue asks for (at most `max`, at least `min`).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** The middle sample (the mean of the two middle ones for an even count). */
/**
 * nccl-run's arguments for a dry run, which does all it does before launching
 * (parse, read the host, resolve, export), on loopback with nothing to wait for.
 */
export const DRY_RUN_ARGS = [
  '--dry-run',
  '--iface',
  'lo',
  '--verify',
  'none',
  '--log-level',
  'silent',
  '--',
  'train.py',
];

export function median(samples) {
  if (samples.length === 0) throw new Error('median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One run of a command, wall time in ms from spawn to exit; throws if it fails. */
export function timeOnce(argv, { cwd, env } = {}) {
  const [file, ...args] = argv;
  const start = performance.now();
  const result = spawnSync(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const elapsed = performance.now() - start;
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) {
    const lines = String(result.stderr)
      .split('\n')
      .filter((line) => line.trim() !== '');
    const why = lines.at(-1) ?? 'no message on stderr';
    throw new Error(`${argv.join(' ')} exited with ${result.status ?? result.signal}: ${why}`);
  }
  return { ms: elapsed, stdout: String(result.stdout) };
}

/**
 * Wall times of several commands, `runs` rounds each, interleaved (A B A B...)
 * so that load from other processes on the machine falls on all of them
 * alike. One unmeasured warm-up round first fills the file cache.
 * Returns one array of samples (ms) per command, in order.
 */
export function interleavedWallTimes(commands, runs, options = {}) {
  for (const argv of commands) timeOnce(argv, options);
  const samples = commands.map(() => []);
  for (let round = 0; round < runs; round += 1) {
    for (const [index, argv] of commands.entries()) samples[index].push(timeOnce(argv, options).ms);
  }
  return samples;
}

/**
 * What `await import(specifier)` costs in a fresh Node process, measured
 * inside it, so Node's own start-up is left out, and after a first trivial
 * import, so the ES module loader's own set-up is too (the CLI has paid for
 * it before it loads any dependency). CPU time (user + system), not wall
 * time: on a machine shared with other work it is the figure that stays put,
 * and with the files cached an import is CPU-bound. Median of `runs`, in ms.
 */
export function importCost(specifier, runs, { cwd } = {}) {
  const probe = [
    "await import('data:text/javascript,');",
    'const start = process.cpuUsage();',
    `await import(${JSON.stringify(specifier)});`,
    'const { user, system } = process.cpuUsage(start);',
    'process.stdout.write(String((user + system) / 1000));',
  ].join('');
  const argv = [process.execPath, '--input-type=module', '-e', probe];
  timeOnce(argv, { cwd });
  const samples = [];
  for (let run = 0; run < runs; run += 1) samples.push(Number(timeOnce(argv, { cwd }).stdout));
  return median(samples);
}

/** Names a measurement function: its name labels its row, also when it fails. */
export function named(name, measure) {
  return Object.defineProperty(measure, 'name', { value: name });
}

/** Caches a promise by key, so measurements that share one set of runs make it once. */
export function memo() {
  const cache = new Map();
  return (key, compute) => {
    if (!cache.has(key)) cache.set(key, compute());
    return cache.get(key);
  };
}

/** Whether a result meets its target; undefined when it has none. */
export function meetsTarget({ value, target }) {
  if (target === undefined) return undefined;
  return (
    (target.max === undefined || value <= target.max) &&
    (target.min === undefined || value >= target.min)
  );
}

function describeTarget(target) {
  if (target === undefined) return '';
  const parts = [];
  if (target.max !== undefined) parts.push(`<= ${target.max}`);
  if (target.min !== undefined) parts.push(`>= ${target.min}`);
  return parts.join(' and ');
}

/** A plain-text table of results (and of measurements that failed). */
export function formatTable(rows) {
  const lines = rows.map((row) => {
    if (row.error !== undefined) return [row.name, 'error', '', '', row.error];
    const met = meetsTarget(row);
    const verdict = met === undefined ? '' : met ? 'ok' : 'MISSED';
    // A ratio's target sits in the second decimal (>= 0.95): one decimal would print 0.946 as 0.9.
    const digits = row.unit === 'ratio' ? 3 : 1;
    return [row.name, row.value.toFixed(digits), row.unit, describeTarget(row.target), verdict];
  });
  const header = ['measurement', 'value', 'unit', 'target', ''];
  const widths = header.map((_, column) =>
    Math.max(...[header, ...lines].map((line) => String(line[column]).length)),
  );
  const render = (line) =>
    line
      .map((cell, column) => String(cell).padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [
    render(header),
    render(widths.map((width) => '-'.repeat(width))),
    ...lines.map(render),
  ].join('\n');
}
