/**
 * An elastic job's completion rule, as torch's c10d rendezvous has it
 * (dynamic_rendezvous.py, v2.6.0): --rdzv-conf last_call_timeout read as
 * `_get_timeout` reads it (get_as_int, positive), and what the registry
 * waits for: MAX nodes, or MIN and the last call (30 s unless given); the
 * static backend's world size is always MAX.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../src/errors.js';
import { readJobShape } from '../../src/job/read-job-shape.js';
import { registryShape } from '../../src/peers/round.js';

const c10d = (...extra: string[]) => [
  '--rdzv-backend=c10d',
  '--rdzv-endpoint=node01:29400',
  '--nnodes=2:4',
  ...extra,
  'train.py',
];

describe('last_call_timeout', () => {
  it('is read from --rdzv-conf, in seconds, and absent when not given', () => {
    expect(
      readJobShape(c10d('--rdzv-conf', 'last_call_timeout=5'), {}, null).lastCallTimeoutS,
    ).toBe(5);
    expect(
      readJobShape(c10d('--rdzv-conf=join_timeout=900,last_call_timeout= 12 '), {}, null)
        .lastCallTimeoutS,
    ).toBe(12);
    expect(readJobShape(c10d(), {}, null).lastCallTimeoutS).toBeUndefined();
  });

  it.each([['0'], ['-3'], ['1.5'], ['soon']])(
    'refuses last_call_timeout=%s in one line naming it',
    (value) => {
      const read = () => readJobShape(c10d('--rdzv-conf', `last_call_timeout=${value}`), {}, null);
      expect(read).toThrow(UsageError);
      expect(read).toThrow(`last_call_timeout=${value} is not a positive whole number of seconds`);
      expect(() =>
        readJobShape(c10d(), { PET_RDZV_CONF: `last_call_timeout=${value}` }, null),
      ).toThrow(ConfigError);
    },
  );
});

describe('registryShape', () => {
  it('waits for MAX, or MIN after the last call, torch 30 s by default, for an elastic c10d job', () => {
    expect(registryShape(readJobShape(c10d(), {}, null))).toEqual({
      expected: 4,
      minimum: 2,
      lastCallMs: 30_000,
    });
    expect(
      registryShape(readJobShape(c10d('--rdzv-conf', 'last_call_timeout=3'), {}, null)),
    ).toEqual({ expected: 4, minimum: 2, lastCallMs: 3_000 });
  });

  it('waits for every node of a fixed size, and for MAX under the static backend', () => {
    const fixed = ['--rdzv-backend=c10d', '--rdzv-endpoint=node01:29400', '--nnodes=3', 't.py'];
    expect(registryShape(readJobShape(fixed, {}, null))).toEqual({
      expected: 3,
      minimum: 3,
      lastCallMs: null,
    });
    const staticJob = ['--nnodes=2:4', '--node_rank=0', '--master_addr=node01', 't.py'];
    expect(registryShape(readJobShape(staticJob, {}, null))).toEqual({
      expected: 4,
      minimum: 4,
      lastCallMs: null,
    });
  });
});
