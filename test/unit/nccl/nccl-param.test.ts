/**
 * NCCL's integer parameters (src/misc/param.cc ncclLoadParam, v2.22.3-1):
 * strtoll(value, NULL, 0), the default only when unset, empty or overflowing.
 */
import { describe, expect, it } from 'vitest';
import { ncclIntParam } from '../../../src/nccl/nccl-param.js';

describe('ncclIntParam', () => {
  it.each([
    [undefined, -1],
    ['', -1],
    ['3', 3],
    [' 3', 3],
    ['+5', 5],
    ['-1', -1],
    ['0x10', 16],
    ['010', 8],
    ['08', 0],
    ['0x', 0],
    ['3abc', 3],
    ['abc', 0],
    ['99999999999999999999', -1],
  ] as const)('reads %j as %d (default -1)', (value, expected) => {
    expect(ncclIntParam(value, -1)).toBe(expected);
  });
});
