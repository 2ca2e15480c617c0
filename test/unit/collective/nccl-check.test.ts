/**
 * What NCCL really did against what nccl-run exported (src/collective/
 * nccl-check.ts), on lines read with audit's reader. The lines follow the
 * format audit's own fixtures pin (test/unit/audit/rank-record.test.ts:
 * NCCL 2.28.9 as torch 2.11's wheel logs it, NVIDIA/nccl src/debug.cc's
 * `host:pid:tid [dev] NCCL INFO` header), changed only in the interfaces.
 */
import { describe, expect, it } from 'vitest';
import { readNcclLog } from '../../../src/audit/rank-record.js';
import { lastWarnings, ncclFindings } from '../../../src/collective/nccl-check.js';

function rank(pid: number, bootstrap: string, devices: string, network: string): string {
  return [
    `col-a:${pid}:${pid} [0] NCCL INFO Bootstrap: Using ${bootstrap}<0>`,
    `col-a:${pid}:${pid} [0] NCCL INFO NCCL version 2.28.9+cuda13.0`,
    `col-a:${pid}:${pid + 1} [0] NCCL INFO NET/Socket : Using ${devices}`,
    `col-a:${pid}:${pid + 1} [0] NCCL INFO Using network ${network}`,
    '',
  ].join('\n');
}

const ranksOf = (text: string) => readNcclLog([{ source: 'f', text }]).ranks;
const expected = { interface: 'eth1', node: 'col-a', required: null };

describe('ncclFindings', () => {
  it('passes ranks that bound the exported interface for bootstrap and data', () => {
    const ranks = ranksOf(rank(10, 'eth1:198.18.70.1', '[0]eth1:198.18.70.1<0>', 'Socket'));
    expect(ncclFindings(ranks, expected)).toEqual([]);
  });

  it.each([
    ['the bootstrap', 'docker0:172.17.0.1', '[0]eth1:198.18.70.1<0>', 'docker0:172.17.0.1'],
    [
      'a second socket device (NCCL uses every match)',
      'eth1:198.18.70.1',
      '[0]eth1:198.18.70.1<0> [1]veth25f2e72:198.19.0.5<0>',
      'veth25f2e72:198.19.0.5',
    ],
  ])('fails a rank whose %s is another interface, naming it', (_what, boot, devices, seen) => {
    const [finding, ...rest] = ncclFindings(ranksOf(rank(10, boot, devices, 'Socket')), expected);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ level: 'failure', rule: 'interface', nodes: ['col-a'] });
    expect(finding?.message).toBe(
      `col-a rank ? (pid 10): NCCL bound ${seen}, not eth1, the interface nccl-run exported`,
    );
  });

  it('fails Socket where --require-transport asked for RDMA, and not without it', () => {
    const ranks = ranksOf(rank(10, 'eth1:198.18.70.1', '[0]eth1:198.18.70.1<0>', 'Socket'));
    expect(ncclFindings(ranks, { ...expected, required: 'ib' })).toEqual([
      {
        level: 'failure',
        rule: 'transport',
        message:
          'col-a rank ? (pid 10): NCCL used network Socket, though --require-transport ib asked for RDMA',
        nodes: ['col-a'],
      },
    ]);
    const ib = ranksOf(rank(10, 'eth1:198.18.70.1', '[0]eth1:198.18.70.1<0>', 'IB'));
    expect(ncclFindings(ib, { ...expected, required: 'ib' })).toEqual([]);
  });

  it('has nothing to compare on a Gloo run: no NCCL line, no finding', () => {
    expect(ncclFindings(ranksOf(''), expected)).toEqual([]);
    expect(lastWarnings(ranksOf(''))).toEqual([]);
  });
});
