import { describe, expect, it } from 'vitest';
import { collectiveSummary, collectiveText } from '../../../src/collective/render.js';
import type { CollectiveReport } from '../../../src/collective/report.js';

const MB = 1e6;
const link = (index: number, rate: number, slow = false) => ({
  node: index,
  name: `col-${'abc'[index]}`,
  host: `col-${'abc'[index]}`,
  address: `198.18.70.${index + 1}`,
  egress: rate,
  ingress: rate,
  link: rate,
  slow,
  outlier: false,
});

const report: CollectiveReport = {
  backend: 'gloo',
  torch: '2.6.0',
  ranks: 3,
  busBandwidth: [
    { bytes: 262_144, seconds: 0.1, busBandwidth: 5.9 * MB },
    { bytes: 4_194_304, seconds: 0.9, busBandwidth: 5.97 * MB },
  ],
  links: [link(0, 700 * MB), link(1, 700 * MB), link(2, 6.25 * MB, true)],
  medianLink: 700 * MB,
  nccl: [],
  verdict: {
    ok: false,
    findings: [{ level: 'failure', rule: 'slow link', message: 'col-c ...', nodes: ['col-c'] }],
  },
  phases: {
    launchS: 5,
    importS: 2,
    initS: 0.1,
    allReduceS: 0.5,
    ringS: 0.2,
    readS: 0.001,
    barrierS: 0.2,
    totalS: 8,
  },
};

describe('the Collective section', () => {
  it("draws each node's link as a bar against the median, the slow one marked", () => {
    expect(collectiveText(report)).toBe(
      [
        'Collective  gloo, 3 ranks on 3 node(s), torch 2.6.0: FAILED',
        '  all-reduce  256 KiB  bus bandwidth 5.90 MB/s (47.2 Mbit/s)',
        '  all-reduce    4 MiB  bus bandwidth 5.97 MB/s (47.8 Mbit/s)',
        "  links       each node's slowest way through the ring pass; | marks the median, 700 MB/s (5600 Mbit/s)",
        `    col-a 198.18.70.1  ${'#'.repeat(20)}|${' '.repeat(20)}  700 MB/s (5600 Mbit/s)`,
        `    col-b 198.18.70.2  ${'#'.repeat(20)}|${' '.repeat(20)}  700 MB/s (5600 Mbit/s)`,
        `    col-c 198.18.70.3  ${' '.repeat(20)}|${' '.repeat(20)}  6.25 MB/s (50.0 Mbit/s)  <- slow: under half the median of the others`,
        '  NCCL        no NCCL line on this node (Gloo ran: no rank saw a GPU)',
        '  failure: col-c ...',
        '',
      ].join('\n'),
    );
  });

  it("run's one line names the backend, the ranks and the largest size's bus bandwidth", () => {
    expect(collectiveSummary(report)).toBe(
      'verify collective: passed, gloo on 3 ranks, bus bandwidth 5.97 MB/s (47.8 Mbit/s) at 4 MiB, in 8.0 s',
    );
  });
});
