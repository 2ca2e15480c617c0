/**
 * NCCL's header found behind whatever a launcher or collector put before it
 * (src/audit/nccl-line.ts; debug.cc's header at v2.18.6-1 .. v2.29.7-1).
 */
import { describe, expect, it } from 'vitest';
import { readBareVersion, readNcclLine } from '../../../src/audit/nccl-line.js';

const LINE = 'node1:4711:4790 [3] NCCL INFO Using network Socket';

describe('readNcclLine', () => {
  it.each([
    ['none', LINE],
    ["torchrun's --tee", `[rank3]:${LINE}`],
    ["torchrun's --log-line-prefix", `[default3]:${LINE}`],
    ["Slurm's srun --label", `3: ${LINE}`],
    ["mpirun's host label (NVIDIA/nccl#1059)", `node1: ${LINE}`],
    ["a collector's timestamp (aws/aws-ofi-nccl#715)", `  | 2024-12-04T05:27:48.128Z | ${LINE}`],
    ["Slurm's label before a torchrun prefix", `3: [rank3]:${LINE}`],
  ])('prefix: %s', (_, text) => {
    expect(readNcclLine(text)).toEqual({
      host: 'node1',
      pid: 4711,
      device: 3,
      level: 'INFO',
      message: 'Using network Socket',
      text: text.trimEnd(),
    });
  });

  it("a WARN line: 2.26+'s timestamp, file:line (debug.cc v2.26.2-1 .. v2.29.7-1)", () => {
    const text =
      "[2026-12-07 02:14:54] vm:12035:12035 [0] init.cc:2250 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'";
    expect(readNcclLine(text)).toMatchObject({
      host: 'vm',
      pid: 12035,
      level: 'WARN',
      message: "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
    });
  });

  it("a device NCCL never set (the lab's real 2.22.3 printed [32765]) and hosts named by address", () => {
    expect(readNcclLine('vm:12018:12018 [32765] init.cc:1701 NCCL WARN x')?.device).toBe(32765);
    expect(readNcclLine('192-222-53-201:266345:266345 [0] NCCL INFO x')?.host).toBe(
      '192-222-53-201',
    );
  });

  it("lines that are not NCCL's own", () => {
    expect(readNcclLine('[rank0]: Traceback (most recent call last):')).toBeNull();
    expect(readNcclLine('NCCL version 2.18.1+cuda12.1')).toBeNull();
    expect(readNcclLine('node1:4711:4790 NCCL CALL ncclAllReduce(...)')).toBeNull();
  });
});

describe('readBareVersion', () => {
  it('init.cc showVersion on stdout, without a header (NVIDIA/nccl-tests#188)', () => {
    expect(readBareVersion('NCCL version 2.18.1+cuda12.1')?.version).toBe('2.18.1');
    expect(readBareVersion('0: NCCL version 2.18.6+cuda12.2')?.version).toBe('2.18.6');
    expect(readBareVersion(LINE)).toBeNull();
    expect(readBareVersion('h:1:1 [0] NCCL INFO NCCL version 2.22.3+cuda12.4')).toBeNull();
  });
});
