import { describe, expect, it } from 'vitest';
import { parseRate } from '../../../src/options/rate.js';

describe('parseRate (SPEC --min-bandwidth)', () => {
  it.each([
    ['500mbit', 500],
    ['10gbit', 10_000],
    ['10Gbit', 10_000],
    ['1.5gbit', 1_500],
    ['800kbit', 0.8],
    ['1tbit', 1_000_000],
    ['2GB/s', 16_000],
    ['125MB/s', 1_000],
    ['100Mb/s', 100],
    ['25Gb/s', 25_000],
    [' 40 gbit ', 40_000],
  ])('%s is %d Mbit/s', (text, mbps) => {
    expect(parseRate(text)).toBeCloseTo(mbps, 9);
  });

  it.each(['500', '0mbit', 'fast', '10 gigs', '5mbps', '-1gbit', '2GB', 'gbit'])(
    'refuses %j (no unit, no rate, or a spelling that could mean bits or bytes)',
    (text) => {
      expect(parseRate(text)).toBeNull();
    },
  );
});
