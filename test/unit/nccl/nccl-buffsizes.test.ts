import { describe, expect, it } from 'vitest';
import { ncclBuffSizes, sumBuffSizes } from '../../../src/nccl/nccl-buffsizes.js';

describe('ncclBuffSizes: computeBuffSizes, each NCCL_*BUFFSIZE read as NCCL reads integers', () => {
  it.each([
    [{}, { LL: 524_288, LL128: 4_915_200, SIMPLE: 4_194_304 }],
    [{ NCCL_BUFFSIZE: '0x800000' }, { LL: 524_288, LL128: 4_915_200, SIMPLE: 8_388_608 }],
    [{ NCCL_BUFFSIZE: '' }, { LL: 524_288, LL128: 4_915_200, SIMPLE: 4_194_304 }],
    [
      { NCCL_LL128_BUFFSIZE: '0', NCCL_LL_BUFFSIZE: '-2' },
      { LL: 524_288, LL128: 0, SIMPLE: 4_194_304 },
    ],
    [{ NCCL_LL_BUFFSIZE: '1M' }, { LL: 1, LL128: 4_915_200, SIMPLE: 4_194_304 }],
  ])('%j', (env, sizes) => {
    expect(ncclBuffSizes(env)).toEqual(sizes);
  });

  it('sums to 9633792 by default: an SHM segment of 9637888 with its header', () => {
    expect(sumBuffSizes(ncclBuffSizes({}))).toBe(9_633_792);
  });
});
