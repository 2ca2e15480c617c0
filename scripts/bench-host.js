#!/usr/bin/env node
/**
 * Benchmark section: reading a busy host's interfaces for real. A network
 * namespace with 500 veth pairs (1,001 interfaces, like a Kubernetes node
 * full of pods) and the median of timed readHostFacts() calls inside it,
 * with and without `ip -d addr show` (every command runs it on a host with a
 * down link, as these veths are; none where every link is up). Needs root
 * and the tsc build (dist/host/read-host-facts.js).
 *
 *   node scripts/bench-host.js [--runs N]
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { median } from './bench-lib.js';

const VETH_PAIRS = 500;
const MODULE = new URL('../dist/host/read-host-facts.js', import.meta.url).href;

/** Rows `{ name, value, unit }`: median ms of `runs` reads after one warm-up, in a fresh namespace. */
export async function benchHost({ runs = 9 } = {}) {
  const { Lab, netnsUnavailable } = await tsImport('../test/lab/netns.ts', import.meta.url);
  if (netnsUnavailable !== null) throw new Error(netnsUnavailable);
  const lab = new Lab('bhost');
  try {
    await lab.host('big');
    const batch = Array.from(
      { length: VETH_PAIRS },
      (_, i) => `link add va${i} type veth peer name vb${i}\n`,
    ).join('');
    execFileSync('ip', ['-n', lab.ns('big'), '-batch', '-'], { input: batch });
    const script = `
import { readHostFacts } from ${JSON.stringify(MODULE)};
const time = async (linkDetails) => {
  await readHostFacts({ ip: linkDetails ? 'always' : 'never' });
  const times = [];
  for (let i = 0; i < ${Number(runs)}; i += 1) {
    const start = performance.now();
    await readHostFacts({ ip: linkDetails ? 'always' : 'never' });
    times.push(performance.now() - start);
  }
  return times;
};
console.log(JSON.stringify({ plain: await time(false), detailed: await time(true) }));
`;
    const { stdout } = await lab.exec(
      'big',
      process.execPath,
      ['--input-type=module', '-e', script],
      {
        timeout: 120_000,
      },
    );
    const { plain, detailed } = JSON.parse(String(stdout), (key, value) =>
      key === 'plain' || key === 'detailed' ? median(value) : value,
    );
    const interfaces = VETH_PAIRS * 2 + 1;
    return [
      { name: `readHostFacts, ${interfaces} real interfaces, median`, value: plain, unit: 'ms' },
      {
        name: `readHostFacts with ip -d addr (a host with down links), ${interfaces} interfaces`,
        value: detailed,
        unit: 'ms',
      },
    ];
  } finally {
    await lab.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await benchHost())
    process.stdout.write(`${row.name}: ${row.value.toFixed(1)} ${row.unit}\n`);
}
