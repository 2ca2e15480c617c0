/**
 * What an NCCL version does (src/nccl/behaviour.ts), from one record per
 * release (src/nccl/releases.ts): every record up to the version; an
 * unknown one does what the newest does.
 */
import { describe, expect, it } from 'vitest';
import { interfaceRules, ncclBehaviour, ncclRules } from '../../../src/nccl/behaviour.js';
import { NCCL_RELEASES } from '../../../src/nccl/releases.js';
import { compareVersions } from '../../../src/version-order.js';

describe('ncclRules', () => {
  it.each([
    ['2.18.3', '2.18-2.27'],
    ['2.22.3', '2.18-2.27'],
    ['2.27.7', '2.18-2.27'],
    ['2.28.3', '2.28+'],
    ['2.29.7', '2.28+'],
    ['3.0.1', '2.28+'],
    [null, '2.28+'],
  ])('%s → %s', (version, rules) => {
    expect(ncclRules(version)).toBe(rules);
  });

  it('each set of rules says what its NCCL does', () => {
    expect(interfaceRules('2.18-2.27')).toMatchObject({ skipsNotRunning: false });
    expect(interfaceRules('2.28+')).toEqual({
      defaultIfnames: ['ib', '^docker,lo,virbr', 'docker', 'lo', 'virbr'],
      skipsNotRunning: true,
    });
  });
});

describe('ncclBehaviour', () => {
  it('folds every record up to the version, by the version of the record', () => {
    expect(ncclBehaviour('2.18.6')).toMatchObject({
      confFileVariable: false,
      envPlugin: false,
      bootstrapLog: 'Bootstrap : Using',
    });
    expect(ncclBehaviour('2.22.3')).toMatchObject({
      confFileVariable: false,
      bootstrapLog: 'Bootstrap : Using',
    });
    expect(ncclBehaviour('2.28.3')).toMatchObject({ envPlugin: false, confHome: 'passwd' });
    expect(ncclBehaviour('2.28.10')).toMatchObject({
      envPlugin: true,
      bootstrapLog: 'Bootstrap: Using',
    });
    expect(ncclBehaviour(null)).toEqual(ncclBehaviour('99.0.0'));
    expect(ncclBehaviour(null).confHome).toBe('HOME');
  });

  it('keeps its records oldest first, so that a new release goes at the end', () => {
    const versions = NCCL_RELEASES.map((release) => release.version);
    expect([...versions].sort(compareVersions)).toEqual(versions);
  });
});
