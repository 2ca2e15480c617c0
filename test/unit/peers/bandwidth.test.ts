/** How the mesh's bandwidth check names a rate in its lines (SPEC --min-bandwidth). */
import { describe, expect, it } from 'vitest';
import { formatRate } from '../../../src/peers/bandwidth.js';

describe('formatRate', () => {
  it.each([
    [48.234, '48.2 Mbit/s'],
    [1_000, '1 Gbit/s'],
    [9_412, '9.4 Gbit/s'],
    [0.5, '500 kbit/s'],
    [250_000, '250 Gbit/s'],
  ])('%d Mbit/s reads %s', (mbps, text) => {
    expect(formatRate(mbps)).toBe(text);
  });
});
