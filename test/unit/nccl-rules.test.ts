/**
 * NCCL's rule sets, one record each (src/stack/nccl-rules.ts), found by the
 * version of the NCCL that will load; unknown gets the newest.
 */
import { describe, expect, it } from 'vitest';
import { atLeast, NCCL_RULES, ncclRules } from '../../src/stack/nccl-rules.js';

describe('ncclRules', () => {
  it.each([
    ['2.18.3', '2.19-2.27'],
    ['2.22.3', '2.19-2.27'],
    ['2.27.7', '2.19-2.27'],
    ['2.28.0', '2.28+'],
    ['2.29.7', '2.28+'],
    ['3.0.1', '2.28+'],
    [null, '2.28+'],
  ])('%s → %s', (version, rules) => {
    expect(ncclRules(version)).toBe(rules);
  });

  it('each record says what its NCCL does', () => {
    expect(NCCL_RULES['2.19-2.27']).toMatchObject({ skipsNotRunning: false, envPluginSince: null });
    expect(NCCL_RULES['2.28+'].defaultIfnames).toEqual([
      'ib',
      '^docker,lo,virbr',
      'docker',
      'lo',
      'virbr',
    ]);
    expect(NCCL_RULES['2.28+']).toMatchObject({ skipsNotRunning: true, envPluginSince: '2.28.7' });
  });

  it.each([
    ['2.28.7', '2.28.7', true],
    ['2.28.10', '2.28.7', true],
    ['2.28.3', '2.28.7', false],
    ['2.3.0', '2.28.0', false],
  ])('atLeast(%s, %s) is %s', (version, since, expected) => {
    expect(atLeast(version, since)).toBe(expected);
  });
});
