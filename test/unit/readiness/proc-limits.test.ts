import { describe, expect, it } from 'vitest';
import { atLeast, limitBytes, parseProcLimit } from '../../../src/readiness/proc-limits.js';

/** /proc/self/limits as Linux 6.1 writes it. */
const LIMITS = `Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max open files            1024                 524288               files     
Max locked memory         65536                unlimited            bytes     
Max realtime timeout      unlimited            unlimited            us        `;

describe('parseProcLimit', () => {
  it('reads the soft and hard limits, unlimited as such', () => {
    expect(parseProcLimit(LIMITS, 'Max open files')).toEqual({ soft: 1024, hard: 524288 });
    expect(parseProcLimit(LIMITS, 'Max locked memory')).toEqual({ soft: 65536, hard: 'unlimited' });
  });

  it('is null for a missing or garbled line', () => {
    expect(parseProcLimit('Limit Soft Hard Units\n', 'Max open files')).toBeNull();
    expect(
      parseProcLimit('Max open files            many                 1024', 'Max open files'),
    ).toBeNull();
  });
});

describe('limits', () => {
  it.each([
    ['unlimited', 1e12, true],
    [65536, 524288, false],
    [524288, 524288, true],
  ] as const)('%j holds %d: %s', (limit, amount, holds) => {
    expect(atLeast(limit, amount)).toBe(holds);
  });

  it.each([
    [65536, '64 KiB'],
    [8388608, '8 MiB'],
    [1000, '1000 bytes'],
    ['unlimited', 'unlimited'],
  ] as const)('%j reads %s', (limit, text) => {
    expect(limitBytes(limit)).toBe(text);
  });
});
