import { describe, expect, it } from 'vitest';
import { cpuListCount } from '../../../src/readiness/cpu-list.js';

describe('cpuListCount', () => {
  it.each([
    ['0', 1],
    ['0-1', 2],
    ['0-3,8-11', 8],
    ['0-63\n', 64],
    ['0,2,4', 3],
    ['', null],
    ['3-1', null],
    ['0-x', null],
  ])('%j: %j', (list, count) => {
    expect(cpuListCount(list)).toBe(count);
  });
});
