/** audit's verdict and output (src/audit/audit.ts, audit-report.ts): exit status, JSON names, text. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditOutput, auditSources } from '../../../src/audit/audit.js';
import { NothingToReadError } from '../../../src/errors.js';

const fixture = (name: string) => ({
  source: name,
  text: readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'nccl-logs', name), 'utf8'),
});

describe('auditSources', () => {
  it('nothing at INFO: exit 66, saying NCCL_DEBUG must be INFO and how (SPEC "Exit status")', () => {
    const warnOnly = {
      source: 'job.out',
      text: 'h:1:1 [0] init.cc:1 NCCL WARN x\nNCCL version 2.22.3+cuda12.4\n',
    };
    expect(() => auditSources([warnOnly])).toThrow(NothingToReadError);
    expect(() => auditSources([warnOnly])).toThrow(
      /NCCL_DEBUG=INFO.*--nccl-log DIR.*\(read: job\.out\)/,
    );
  });
});

describe('auditOutput', () => {
  it("a failure is exit 75, a clean log 0; the JSON has explain's names and no evidence map", () => {
    const failed = auditOutput(auditSources([fixture('ib-fallback-2.27.txt')]), true);
    expect(failed.exitCode).toBe(75);
    const json = JSON.parse(failed.text);
    expect(Object.keys(json)).toEqual(['ranks', 'findings']);
    expect(json.ranks[0]).toMatchObject({
      host: 'dgx-1',
      rank: 0,
      nranks: 2,
      nccl: {
        version: '2.27.7',
        bootstrap: { interface: 'bond0', address: '10.40.0.1' },
        network: 'IB',
        devices: {
          socket: null,
          ib: [{ index: 0, device: 'mlx5_0', port: 1, link: 'IB' }, { index: 1 }],
        },
      },
    });
    expect(json.ranks[0].evidence).toBeUndefined();
    expect(json.findings[0]).toMatchObject({
      level: 'failure',
      ranks: ['rank 1 (dgx-2 pid 8001 GPU 0)'],
    });
    expect(auditOutput(auditSources([fixture('healthy-ib-2.26.txt')]), false)).toMatchObject({
      exitCode: 0,
    });
  });

  it('the text: one row per rank, then each finding with its ranks and line', () => {
    const { text } = auditOutput(auditSources([fixture('socket-veth-2.18.txt')]), false);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(
      /^rank +host:pid +gpu +nccl +bootstrap +network +plugin +devices +channels via$/,
    );
    expect(lines[2]).toMatch(
      /^1 +gpu-b:3307 +0 +2\.18\.6 +eno1 10\.20\.0\.12 +Socket +absent +socket \[0\]eno1 \[1\]veth25f2e72; ib none +Socket\/1 x2$/,
    );
    expect(text).toContain("FAIL NCCL's socket device [1] is on a link-local address");
    expect(text).toContain(
      '     socket-veth-2.18.txt:26: 1: gpu-b:3307:3340 [0] NCCL INFO NET/Socket : Using',
    );
  });
});
