import { describe, expect, it } from 'vitest';
import { nodeLinks } from '../../../src/collective/links.js';
import type { CollectiveResult } from '../../../src/collective/result.js';
import {
  collectiveFigures,
  figureFindings,
  outlierLinks,
  slowLinks,
} from '../../../src/collective/verdict.js';

const MB = 1e6;

/** A result of `rates.length` nodes (one rank each) whose ring sends ran at the given MB/s. */
function ringResult(sends: [from: number, to: number, mbPerSecond: number][], nodes: number) {
  const result: CollectiveResult = {
    v: 1,
    backend: 'gloo',
    torch: '2.6.0',
    ranks: nodes,
    allReduce: [{ bytes: 4 * MB, seconds: 0.1 }],
    members: Array.from({ length: nodes }, (_, node) => ({
      rank: node,
      localRank: 0,
      node,
      name: `n${node}`,
      address: `198.18.0.${node + 1}`,
      host: `n${node}`,
      pid: 100 + node,
    })),
    sends: sends.map(([from, to, rate]) => ({ from, to, bytes: MB, seconds: MB / (rate * MB) })),
    phases: { importS: 1, initS: 0.1, allReduceS: 0.5, ringS: 0.2 },
  };
  return result;
}

/** Node n's egress to both neighbours at `egress[n]` MB/s, on a ring of egress.length nodes. */
function egressRing(egress: number[]) {
  const n = egress.length;
  const sends: [number, number, number][] = [];
  for (let i = 0; i < n; i += 1) {
    sends.push([i, (i + 1) % n, egress[i] as number]);
    if (n > 2) sends.push([i, (i + n - 1) % n, egress[i] as number]);
  }
  return ringResult(sends, n);
}

describe('nodeLinks: a node is as fast as the lower of its best send and its best receive', () => {
  it.each([
    // Node 1's egress is shaped: slow both ways it sends, its neighbours keep one fast leg each.
    [
      [1000, 6, 1000],
      [1000, 6, 1000],
    ],
    [
      [1000, 1000, 1000, 6],
      [1000, 1000, 1000, 6],
    ],
    // Two nodes: one pair, both see it.
    [
      [6, 1000],
      [6, 6],
    ],
  ])('egress %j → links %j MB/s', (egress, links) => {
    expect(nodeLinks(egressRing(egress)).map((link) => (link.link ?? 0) / MB)).toEqual(links);
  });

  it("names a node whose receiving side is slow (the shaper on the switch's port)", () => {
    // Every send into node 2 at 6 MB/s, everything else fast.
    const sends: [number, number, number][] = [
      [0, 1, 1000],
      [1, 2, 6],
      [2, 0, 1000],
      [0, 2, 6],
      [1, 0, 1000],
      [2, 1, 1000],
    ];
    expect(nodeLinks(ringResult(sends, 3)).map((link) => (link.link ?? 0) / MB)).toEqual([
      1000, 1000, 6,
    ]);
  });

  it('has no link on one node (no pass)', () => {
    expect(nodeLinks(ringResult([], 1))[0]?.link).toBeNull();
  });
});

describe('the slow-link rule: under half the median of the others fails', () => {
  it.each([
    [[1000, 6, 1000], ['n1']],
    [[1000, 499, 1000], ['n1']],
    [[1000, 500, 1000], []],
    [[1000, 1000, 1000, 6], ['n3']],
    // Two slow of four: the median of the others still finds each.
    [[1000, 10, 1000, 10], []],
    [
      [1000, 10, 1000, 1000, 10],
      ['n0', 'n1', 'n4'],
    ],
    // (n0 sits between the two slow nodes: all it receives comes from them, so a
    // pass among ring neighbours cannot clear it; named with them, not missed.)
    [[6, 1000], []],
  ])('links %j MB/s → %j', (egress, slow) => {
    const links = nodeLinks(egressRing(egress));
    expect(slowLinks(links).map((link) => link.name)).toEqual(slow);
  });
});

describe("the gentler rule (Megatron's): >10 % and >1 standard deviation below the mean warns", () => {
  it.each([
    [[1000, 1000, 1000], []],
    [[1000, 850, 1000, 1000], ['n1']],
    // 5 % below: within 10 %.
    [[1000, 950, 1000, 1000], []],
    // Widely spread: 15 % below the mean but within one deviation.
    [[1000, 600, 1400, 700, 1300], ['n1']],
    [[1000, 900, 1100], []],
    [[6, 1000], []],
  ])('links %j MB/s → %j', (egress, outliers) => {
    expect(outlierLinks(nodeLinks(egressRing(egress))).map((link) => link.name)).toEqual(outliers);
  });
});

describe('figureFindings', () => {
  it('fails the slow node with its host, address and rate, and warns of a gentler outlier', () => {
    const slow = figureFindings(collectiveFigures(egressRing([1000, 6.25, 1000])), null);
    expect(slow).toEqual([
      {
        level: 'failure',
        rule: 'slow link',
        message: expect.stringMatching(
          /^n1 \(host n1, 198\.18\.0\.2\): its link runs at 6\.25 MB\/s \(50\.0 Mbit\/s\), under half the median of the others/,
        ),
        nodes: ['n1'],
      },
    ]);
    const gentle = figureFindings(collectiveFigures(egressRing([1000, 850, 1000, 1000])), null);
    expect(gentle.map((finding) => [finding.level, finding.rule, finding.nodes])).toEqual([
      ['warning', 'outlier', ['n1']],
    ]);
  });

  it('fails below --min-bus-bandwidth at the largest size, and passes at it', () => {
    // 4 MB in 0.1 s on 3 ranks: 40 MB/s × 4/3.
    const figures = collectiveFigures(egressRing([1000, 1000, 1000]));
    expect(figures.busBandwidth[0]?.busBandwidth).toBeCloseTo((40 * MB * 4) / 3, 3);
    expect(figureFindings(figures, 60 * MB).map((finding) => finding.rule)).toEqual([
      'bus bandwidth',
    ]);
    expect(figureFindings(figures, 50 * MB)).toEqual([]);
  });
});
