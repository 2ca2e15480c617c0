/**
 * The GPU check's (b) and (c) (test/device/run-checks.ts) on what its runs
 * would leave behind on the device machine: the workers' lines and NCCL's
 * logs in NCCL 2.28.9's own format (read by src/audit, as `nccl-run audit` reads them).
 */
import { describe, expect, it } from 'vitest';
import { readOneProcess } from '../../../src/audit/rank-record.js';
import { busBandwidth, dataPathRows, type NodeRun, trapRows } from '../../device/run-checks.js';

const failed = (rows: { check: string; status: string }[]) =>
  rows.filter((r) => r.status !== 'pass').map((r) => r.check);

describe('busBandwidth', () => {
  it("nccl-tests' all_reduce formula: busBw = algBw × 2(n−1)/n", () => {
    const bytes = 256 * 2 ** 20;
    expect(busBandwidth({ bytes, seconds: 0.1, ranks: 2 })).toEqual({
      algBw: bytes / 0.1,
      busBw: bytes / 0.1,
    });
    expect(busBandwidth({ bytes, seconds: 0.1, ranks: 8 }).busBw).toBeCloseTo((bytes / 0.1) * 1.75);
  });
});

/** A node's NCCL 2.28 log on interface `name` (address `address`). */
function ncclLog(node: number, name: string, address: string, hostId = `gpu-check-node${node}`) {
  const peer = 1 - node;
  return readOneProcess(
    [
      `gpu-host:47${node}1:47${node}1 [0] NCCL INFO NCCL_HOSTID set by environment to ${hostId}`,
      `gpu-host:47${node}1:47${node}1 [0] NCCL INFO Bootstrap: Using ${name}:${address}<0>`,
      `gpu-host:47${node}1:47${node}9 [0] NCCL INFO NET/Socket : Using [0]${name}:${address}<0>`,
      `gpu-host:47${node}1:47${node}9 [0] NCCL INFO Channel 00/0 : ${peer}[0] -> ${node}[0] [receive] via NET/Socket/0`,
      `gpu-host:47${node}1:47${node}9 [0] NCCL INFO Channel 00/0 : ${node}[0] -> ${peer}[0] [send] via NET/Socket/0`,
    ].join('\n'),
  );
}

function nodeRun(node: number, overrides: Partial<NodeRun> = {}): NodeRun {
  const address = `198.18.0.${node + 1}`;
  return {
    node,
    exitCode: 0,
    stopped: null,
    decision: { interface: 'ens3f0', address },
    unmanaged: { interface: 'eno1', address: `198.18.10${node}.1` },
    env: { NCCL_SOCKET_IFNAME: '=ens3f0', NCCL_HOSTID: `gpu-check-node${node}` },
    worker: ncclLog(node, 'ens3f0', address),
    result:
      node === 0
        ? { rank: 0, ranks: 2, bytes: 256 * 2 ** 20, iters: 5, seconds: 0.125, correct: true }
        : null,
    ...overrides,
  };
}

describe('dataPathRows', () => {
  it("both nodes bound, listed and connected on nccl-run's interface: every row passes", () => {
    const rows = dataPathRows('b) data path', [nodeRun(0), nodeRun(1)]);
    expect(failed(rows)).toEqual([]);
    expect(rows.at(-1)?.detail).toBe(
      'sum correct; 256 MiB, 2 ranks, 5 timed: 125.0 ms each, algBw 2.15 GB/s, busBw 2.15 GB/s',
    );
  });

  it('NCCL on another interface than the one exported fails bootstrap, NET/Socket and channels', () => {
    const rows = dataPathRows('b) data path', [
      nodeRun(0, { worker: ncclLog(0, 'eno1', '198.18.100.1') }),
      nodeRun(1),
    ]);
    expect(failed(rows)).toEqual([
      'b) data path: bootstrap',
      'b) data path: NET/Socket',
      'b) data path: channels',
    ]);
    expect(rows[2]?.detail).toBe('node 0: bootstrap on eno1, not ens3f0');
  });

  it('one NCCL_HOSTID for both: NCCL saw one host, and its channels went over shared memory', () => {
    const shm = readOneProcess(
      [
        'gpu-host:4701:4701 [0] NCCL INFO NCCL_HOSTID set by environment to same',
        'gpu-host:4701:4701 [0] NCCL INFO Bootstrap: Using ens3f0:198.18.0.1<0>',
        'gpu-host:4701:4709 [0] NCCL INFO Channel 00 : 0[0] -> 1[0] via SHM/direct/direct',
      ].join('\n'),
    );
    const rows = dataPathRows('b) data path', [
      nodeRun(0, { worker: shm }),
      nodeRun(1, { worker: ncclLog(1, 'ens3f0', '198.18.0.2', 'same') }),
    ]);
    expect(failed(rows)).toEqual([
      'b) data path: two nodes',
      'b) data path: NET/Socket',
      'b) data path: channels',
    ]);
    expect(rows[4]?.detail).toContain('node 0: 1 channel(s) elsewhere (SHM/direct/direct)');
  });

  it("nccl-run audit reads both workers' logs: a socket device on loopback is its failure", () => {
    const looped = readOneProcess(
      [
        'gpu-host:4701:4701 [0] NCCL INFO Bootstrap: Using ens3f0:198.18.0.1<0>',
        'gpu-host:4701:4709 [0] NCCL INFO NET/Socket : Using [0]ens3f0:198.18.0.1<0> [1]lo:127.0.0.1<0>',
        'gpu-host:4701:4709 [0] NCCL INFO Using network Socket',
        'gpu-host:4701:4709 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/1',
      ].join('\n'),
    );
    const rows = dataPathRows('b) data path', [nodeRun(0, { worker: looped }), nodeRun(1)]);
    const audit = rows.find((r) => r.check === 'b) data path: audit');
    expect(audit?.status).toBe('fail');
    expect(audit?.detail).toContain(
      "failure: NCCL's socket device [1] is on loopback (lo 127.0.0.1) in a job across hosts; 1 channel(s) go via NET/Socket/1",
    );
    const clean = dataPathRows('b) data path', [nodeRun(0), nodeRun(1)]);
    expect(clean.find((r) => r.check === 'b) data path: audit')?.status).toBe('pass');
  });

  it('a worker that never got the variable, and an agent stopped at its timeout', () => {
    const rows = dataPathRows('b) data path', [
      nodeRun(0, { env: { NCCL_SOCKET_IFNAME: null }, result: null }),
      nodeRun(1, { exitCode: 124, stopped: 'stopped at its 150 s timeout' }),
    ]);
    expect(rows[0]).toMatchObject({
      status: 'fail',
      detail: "node 0's worker saw NCCL_SOCKET_IFNAME=nothing, nccl-run chose ens3f0",
    });
    expect(rows.at(-1)).toEqual({
      check: 'b) data path: all_reduce',
      status: 'fail',
      detail: 'node 1 stopped at its 150 s timeout',
    });
  });
});

describe('trapRows', () => {
  const trapped = (node: number) =>
    nodeRun(node, {
      decision: null,
      env: { NCCL_SOCKET_IFNAME: null },
      worker: readOneProcess(
        [
          `gpu-host:48${node}1:48${node}1 [0] NCCL INFO Bootstrap: Using eno1:198.18.10${node}.1<0>`,
          ...(node === 1
            ? [
                '[2026-11-20 10:00:00] gpu-host:4811:4811 [0] misc/socket.cc:596 NCCL WARN socketStartConnect: connect to 198.18.100.1<36473> failed : Network is unreachable',
              ]
            : []),
        ].join('\n'),
      ),
      result: null,
      ...(node === 0
        ? { exitCode: 143, stopped: "stopped 15 s after node 1's agent had failed" }
        : { exitCode: 1 }),
    });

  it('torchrun alone fails, NCCL having taken the first interface as nccl-run predicted', () => {
    const rows = trapRows([trapped(0), trapped(1)]);
    expect(failed(rows)).toEqual([]);
    expect(rows[0]?.detail).toBe(
      "failed, as a job on the trap does: node 0 stopped 15 s after node 1's agent had failed, node 1 exited 1; NCCL WARN socketStartConnect: connect to 198.18.100.1<36473> failed : Network is unreachable",
    );
    expect(rows[1]?.detail).toBe(
      "node 0: NCCL took eno1 198.18.100.1, nccl-run's model said eno1 198.18.100.1; node 1: NCCL took eno1 198.18.101.1, nccl-run's model said eno1 198.18.101.1",
    );
  });

  it('a job that ran alone means the lab set no trap; a pick other than the model fails too', () => {
    const rows = trapRows([
      { ...trapped(0), exitCode: 0, stopped: null },
      { ...trapped(1), exitCode: 0, unmanaged: { interface: 'ens3f0', address: '198.18.0.2' } },
    ]);
    expect(failed(rows)).toEqual(['c) trap: NCCL alone', "c) trap: NCCL's own pick"]);
  });
});
