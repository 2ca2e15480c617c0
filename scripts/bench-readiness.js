#!/usr/bin/env node
/**
 * Benchmark section: the readiness step (issue 29: "at most a few
 * milliseconds"), the reader of this node's files and the checks, from the
 * tsc build (dist/readiness/). In a fresh Node for each run, as nccl-run
 * meets it: the modules' import, the first read + assess (what a launch
 * pays), then the median of warm ones. Needs the build (npm run bench builds).
 *
 *   node scripts/bench-readiness.js [--runs N]
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, timeOnce } from './bench-lib.js';

const DIST = new URL('../dist/readiness/', import.meta.url).href;

/** A two-node job of 8 ranks a node on IB, NCCL 2.29, on this host's first interface. */
const probe = `
import { readdirSync } from 'node:fs';
const importStart = performance.now();
const { readNodeReadiness } = await import(${JSON.stringify(`${DIST}read-node-readiness.js`)});
const { readiness } = await import(${JSON.stringify(`${DIST}readiness.js`)});
const imported = performance.now() - importStart;
const iface = readdirSync('/sys/class/net').find((name) => name !== 'lo') ?? 'lo';
const needs = {
  nprocPerNode: '8', torchVersion: '2.6.0', nnodes: { min: 2, max: 2 }, storeHost: true,
  transport: 'ib', requireTransport: null, ncclVersion: '2.29.7', ncclEnv: {},
  network: { interface: iface, family: 'ipv4', otherInterfaces: [], routesBack: [], peerMtus: [] },
};
const step = () => {
  const start = performance.now();
  const findings = readiness(needs, readNodeReadiness(process.env, iface), []);
  if (findings.length !== 6) throw new Error('not six findings');
  return performance.now() - start;
};
const first = step();
const warm = Array.from({ length: 25 }, step);
process.stdout.write(JSON.stringify({ imported, first, warm }));
`;

/** Rows `{ name, value, unit, target? }`: medians over `runs` fresh processes. */
export function benchReadiness({ runs = 9 } = {}) {
  const argv = [process.execPath, '--input-type=module', '-e', probe];
  // PATH and HOME only: this machine's NODE_EXTRA_CA_CERTS costs every start ~100 ms.
  const options = { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } };
  timeOnce(argv, options);
  const samples = Array.from({ length: runs }, () => JSON.parse(timeOnce(argv, options).stdout));
  return [
    {
      name: 'readiness: import of its tsc-built modules (the CLI has them in its bundle), median',
      value: median(samples.map((sample) => sample.imported)),
      unit: 'ms',
    },
    {
      name: 'readiness: first read + assess in a fresh process, median',
      value: median(samples.map((sample) => sample.first)),
      unit: 'ms',
      target: { max: 5 },
    },
    {
      name: 'readiness: warm read + assess, median',
      value: median(samples.flatMap((sample) => sample.warm)),
      unit: 'ms',
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' } } });
  for (const row of benchReadiness({ runs: Number(values.runs) }))
    process.stdout.write(`${row.name}: ${row.value.toFixed(2)} ${row.unit}\n`);
}
