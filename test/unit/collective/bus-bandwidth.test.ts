import { describe, expect, it } from 'vitest';
import { busBandwidth } from '../../../src/collective/bus-bandwidth.js';

// nccl-tests src/all_reduce.cu AllReduceGetBw: busBw = bytes / sec × 2(n-1)/n.
describe('busBandwidth (nccl-tests all-reduce)', () => {
  it.each([
    [1e9, 1, 2, 1e9],
    [1e9, 1, 4, 1.5e9],
    [8e6, 0.5, 8, 28e6],
    [1e9, 1, 1, 0],
    [1e9, 0, 2, null],
    [1e9, 1, 0, null],
  ])('%d bytes in %d s over %d ranks: %s B/s', (bytes, seconds, ranks, expected) => {
    expect(busBandwidth(bytes, seconds, ranks)).toBe(expected);
  });
});
