import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  attemptBudgetMs,
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  backoffDelayMs,
  MIN_ATTEMPT_MS,
} from '../../../src/reach/backoff.js';

describe('backoffDelayMs', () => {
  it('stays within [0, min(cap, base·2^attempt)) for any random draw', () => {
    fc.assert(
      fc.property(
        fc.nat(100),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const delay = backoffDelayMs(attempt, () => draw);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(
            Math.max(1, Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt)),
          );
        },
      ),
    );
  });

  it('doubles its ceiling until the cap', () => {
    const ceiling = (attempt: number) => backoffDelayMs(attempt, () => 0.999_999) + 1;
    expect([0, 1, 2, 3, 4, 5, 6].map(ceiling)).toEqual([100, 200, 400, 800, 1600, 2000, 2000]);
  });
});

describe('attemptBudgetMs', () => {
  it('gives an attempt its full length, what is left, or at least MIN_ATTEMPT_MS at the end', () => {
    expect(attemptBudgetMs(5_000, 60_000)).toBe(5_000);
    expect(attemptBudgetMs(5_000, 1_200)).toBe(1_200);
    expect(attemptBudgetMs(5_000, 3)).toBe(MIN_ATTEMPT_MS);
  });
});
