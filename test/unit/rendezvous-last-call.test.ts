/**
 * An elastic job's last call, as torch's c10d rendezvous has it
 * (dynamic_rendezvous.py, v2.6.0): --rdzv-conf last_call_timeout read as
 * `_get_timeout` reads it (get_as_int, positive). The registry's
 * completion rule that takes it is tested in test/unit/peers/round.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../src/errors.js';
import { readJobShape } from '../../src/job/read-job-shape.js';
import { elasticC10dArgv as c10d } from '../fixtures/job-shape.js';

describe('last_call_timeout', () => {
  it('is read from --rdzv-conf, in seconds, and torch’s default (30 s) when not given', () => {
    expect(
      readJobShape(c10d('--rdzv-conf', 'last_call_timeout=5'), {}, null).lastCallTimeoutS,
    ).toBe(5);
    expect(
      readJobShape(c10d('--rdzv-conf=join_timeout=900,last_call_timeout= 12 '), {}, null)
        .lastCallTimeoutS,
    ).toBe(12);
    expect(readJobShape(c10d(), {}, null).lastCallTimeoutS).toBe(30);
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
