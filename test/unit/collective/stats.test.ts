import { describe, expect, it } from 'vitest';
import { mean, median, standardDeviation } from '../../../src/collective/stats.js';

describe('the verdict statistics', () => {
  it.each([
    [[], null, null, null],
    [[4], 4, 4, 0],
    [[1, 3], 2, 2, 1],
    [[5, 1, 3], 3, 3, Math.sqrt(8 / 3)],
    [[1, 2, 3, 10], 2.5, 4, Math.sqrt(12.5)],
  ])('%j: median %s, mean %s, population std %s', (values, med, avg, std) => {
    expect(median(values)).toBe(med);
    expect(mean(values)).toBe(avg);
    if (std === null) expect(standardDeviation(values)).toBeNull();
    else expect(standardDeviation(values)).toBeCloseTo(std, 12);
  });
});
