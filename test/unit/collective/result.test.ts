import { describe, expect, it } from 'vitest';
import { parseCollectiveResult } from '../../../src/collective/result.js';

describe("parseCollectiveResult (the program's line)", () => {
  it.each([
    ['not json', /^not JSON/],
    ['{"v": 2}', /./],
    ['{"v": 1, "backend": "mpi"}', /./],
  ])('refuses %s with a reason', (text, reason) => {
    const parsed = parseCollectiveResult(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(reason);
  });
});
