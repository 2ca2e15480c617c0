import { describe, expect, it } from 'vitest';
import { atLeast, compareVersions, majorMinor } from '../../src/version-order.js';

describe('compareVersions', () => {
  it.each([
    ['2.28.7', '2.28.7', 0],
    ['2.28.10', '2.28.7', 1],
    ['2.28.3', '2.28.7', -1],
    ['2.3.0', '2.28.0', -1],
    ['2.28', '2.28.0', 0],
    ['2.14.1+cu130', '2.14.1', 0],
    ['1.13.0a0', '2.6', -1],
  ])('%s against %s', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });

  it('atLeast is compareVersions >= 0', () => {
    expect(atLeast('2.28.7', '2.28.7')).toBe(true);
    expect(atLeast('2.28.3', '2.28.7')).toBe(false);
  });

  it.each([
    ['2.6.0+debian', '2.6'],
    ['1.13.0a0', '1.13'],
    ['2.14.1+cu130', '2.14'],
    ['2', null],
    ['', null],
    ['main', null],
  ])('majorMinor(%s) is %s', (version, expected) => {
    expect(majorMinor(version)).toBe(expected);
  });
});
