/**
 * NCCL's /dev/shm, against the numbers users' logs give ("failed to extend
 * /dev/shm/nccl-XXXXXX to N bytes" is the size ncclShmOpen fallocates), and
 * the per-node estimate as a table. No GPU here: the segments' sizes are the
 * real numbers that can be had; a whole communicator's need is an estimate
 * (nccl-shm.ts says of what).
 */
import { describe, expect, it } from 'vitest';
import { mib, ncclSegments, ncclShmNeed, ncclShmRecords } from '../../../src/nccl/nccl-shm.js';
import type { NcclShm } from '../../../src/nccl/releases.js';

/** What NCCL `version` puts in /dev/shm, from its release record (src/nccl/releases.ts). */
const ncclShmRecord = (version: string) => ncclShmRecords(version)[0] as NcclShm;

const MiB = 2 ** 20;

describe("NCCL's segments against users' logs", () => {
  it.each([
    // NVIDIA/nccl#1518 (2.2x), pytorch/ci-infra#490 (transport/shm.cc:551: 2.29).
    ['2.22.3', {}, 'shmReceiver', 9_637_892],
    ['2.29.7', {}, 'shmReceiver', 9_637_892],
    // NVIDIA/nccl-tests#166 (misc/shmutils.cc:71, transport/shm.cc:114: 2.18), with a 512 KiB NCCL_BUFFSIZE.
    ['2.18.6', { NCCL_BUFFSIZE: '524288' }, 'shmReceiver', 5_967_876],
    // deepseek-ai/DeepEP#53: the 2.23 proxy ops pool.
    ['2.23.4', {}, 'proxyOpsPool', 10_486_116],
    // ai-dynamo/dynamo#1408: the 2.26/2.27 proxy ops pool.
    ['2.26.2', {}, 'proxyOpsPool', 33_030_532],
    ['2.27.7', {}, 'proxyOpsPool', 33_030_532],
  ] as const)('NCCL %s with %j: %s is %d bytes', (version, env, segment, bytes) => {
    expect(ncclSegments(ncclShmRecord(version), env)[segment]).toBe(bytes);
  });

  it('the send side of an SHM connection is its header and the refcount', () => {
    expect(ncclSegments(ncclShmRecord('2.22.3'), {}).shmSender).toBe(4100);
  });

  it('NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE and NCCL_LL128_BUFFSIZE size the receiver, read as NCCL reads integers', () => {
    const record = ncclShmRecord('2.22.3');
    expect(ncclSegments(record, { NCCL_BUFFSIZE: '0x800000' }).shmReceiver).toBe(
      4096 + 524_288 + 4_915_200 + 8 * MiB + 4,
    );
    expect(
      ncclSegments(record, { NCCL_LL128_BUFFSIZE: '0', NCCL_LL_BUFFSIZE: '-2' }).shmReceiver,
    ).toBe(4096 + 524_288 + 4 * MiB + 4);
  });
});

describe('the record of a version', () => {
  it.each([
    ['2.17.1', 4_194_656],
    ['2.19.3', 4_194_656],
    ['2.20.3', 5_767_520],
    ['2.21.5', 7_340_384],
    ['2.22.3', 7_340_384],
    ['2.24.3', 14_156_128],
    ['2.27.5', 33_030_528],
    ['2.28.9', 34_210_176],
    ['2.29.7', 34_210_176],
    ['3.0.1', 34_210_176],
  ])('NCCL %s: a proxy ops pool of %d bytes', (version, bytes) => {
    expect(ncclShmRecord(version).proxyOpsPoolBytes).toBe(bytes);
  });

  it('an unknown version takes every record, oldest first', () => {
    const every = ncclShmRecords(null).map((record) => record.proxyOpsPoolBytes);
    expect(every[0]).toBe(4_194_656);
    expect(every.at(-1)).toBe(34_210_176);
    expect(new Set(every).size).toBe(8);
    expect(ncclShmRecords('2.29.7')).toEqual([ncclShmRecord('2.29.7')]);
  });
});

describe('the need of one communicator on a node', () => {
  const need = (
    version: string | null,
    localRanks: number,
    multiNode: boolean,
    env: Record<string, string> = {},
  ) => ncclShmNeed({ localRanks, multiNode, env, pageBytes: 4096 }, ncclShmRecords(version));
  // A connection in pages: 9637892 → 2354 pages, 4100 → 2 pages.
  const connection = (2354 + 2) * 4096;

  it.each([
    // version, local ranks, several nodes, env, bytes
    ['2.22.3', 1, false, {}, 0],
    ['2.22.3', 2, false, {}, 2 * 1 * 2 * connection],
    ['2.22.3', 8, false, {}, 8 * 2 * 2 * connection],
    ['2.22.3', 8, false, { NCCL_SHM_DISABLE: '1' }, 0],
    ['2.22.3', 8, false, { NCCL_MIN_NCHANNELS: '4' }, 8 * 2 * 4 * connection],
    ['2.22.3', 8, false, { NCCL_MAX_NCHANNELS: '1' }, 8 * 2 * 1 * connection],
    ['2.22.3', 1, true, {}, 1793 * 4096],
    ['2.29.7', 1, true, {}, 8353 * 4096],
    ['2.29.7', 8, true, { NCCL_SHM_DISABLE: '1' }, 8 * 8353 * 4096],
    ['2.29.7', 8, true, {}, 8 * 8353 * 4096 + 8 * 2 * 2 * connection],
    // Unknown: the largest pool of all.
    [null, 2, true, {}, 2 * 8353 * 4096 + 2 * 1 * 2 * connection],
    // NCCL_SHM_USE_CUDA_MEMCPY puts a proxy (and its pool) on every SHM connection of a single node.
    [
      '2.22.3',
      2,
      false,
      { NCCL_SHM_USE_CUDA_MEMCPY: '1' },
      2 * 1793 * 4096 + 2 * 1 * 2 * connection,
    ],
  ] as const)(
    'NCCL %s, %d local ranks, several nodes %s, %j: %d bytes',
    (version, ranks, multi, env, bytes) => {
      expect(need(version, ranks, multi, env).bytes).toBe(bytes);
    },
  );

  it('names each term, and where the buffers may live elsewhere', () => {
    expect(need('2.22.3', 4, true).terms).toEqual([
      "the proxy's ops pool, 7 MiB per rank × 4 (src/proxy.cc proxyProgressInit)",
      'SHM transport buffers where local GPUs have no P2P path, 9.2 MiB per connection × 2 peers × 2 channels × 4 ranks (src/transport/shm.cc)',
    ]);
    expect(need('2.29.7', 2, false, { NCCL_P2P_DISABLE: '1' }).terms).toEqual([
      'SHM transport buffers NCCL_P2P_DISABLE leaves local GPUs to SHM, 9.2 MiB per connection × 1 peer × 2 channels × 2 ranks (src/transport/shm.cc, unless NCCL holds them in cuMem host memory: NCCL_CUMEM_HOST_ENABLE, the default from 2.24 with a CUDA 12.6 driver where the container allows it)',
    ]);
    expect(need('2.29.7', 2, false, { NCCL_CUMEM_HOST_ENABLE: '0' }).terms[0]).not.toMatch(/cuMem/);
  });

  it("Docker's default 64 MiB holds a 2.22 job of 2 local ranks, not one of 4; a 2.29 two-node job of 2 ranks overflows it on the pools alone", () => {
    expect(need('2.22.3', 2, false).bytes).toBeLessThan(64 * MiB);
    expect(need('2.22.3', 4, false).bytes).toBeGreaterThan(64 * MiB);
    expect(need('2.29.7', 2, true, { NCCL_SHM_DISABLE: '1' }).bytes).toBeGreaterThan(64 * MiB);
  });
});

describe('mib', () => {
  it.each([
    [64 * MiB, '64 MiB'],
    [9_641_984, '9.2 MiB'],
    [1.5 * 2 ** 30, '1.5 GiB'],
    [12.4 * MiB, '12 MiB'],
  ])('%d bytes: %s', (bytes, text) => {
    expect(mib(bytes)).toBe(text);
  });
});
