/**
 * The job's token (SPEC "Verification": every probe message is bound to
 * the job): a hash of the master's address and port, the job id and the
 * probe port, which tells jobs that share nodes and ports apart; under
 * --probe-secret-file an HMAC under the secret, which keeps strangers out.
 */
import { describe, expect, it } from 'vitest';
import { jobToken } from '../../../src/membership/token.js';

describe('jobToken', () => {
  const base = {
    master: { host: 'node01', port: 29500 },
    jobId: '4242',
    probePort: 29501,
  };

  it('is 32 hex digits, the same from the same parts', () => {
    expect(jobToken(base)).toMatch(/^[0-9a-f]{32}$/);
    expect(jobToken({ ...base })).toBe(jobToken(base));
  });

  it('differs between jobs that share nodes and ports', () => {
    const tokens = new Set([
      jobToken(base),
      jobToken({ ...base, jobId: '4243' }),
      jobToken({ ...base, jobId: null }),
      jobToken({ ...base, master: { host: 'node01', port: 29600 } }),
      jobToken({ ...base, probePort: 29502 }),
    ]);
    expect(tokens.size).toBe(5);
  });
});

describe('the job token and its secret', () => {
  const parts = { master: { host: 'node01', port: 29500 }, jobId: '7002', probePort: 29500 };

  it('is the public hash without a secret, and an HMAC under one that differs from it and by secret', () => {
    const open = jobToken(parts);
    const keyed = jobToken({ ...parts, secret: Buffer.from('s3cret') });
    expect(keyed).toMatch(/^[0-9a-f]{32}$/);
    expect(keyed).not.toBe(open);
    expect(jobToken({ ...parts, secret: Buffer.from('s3cret') })).toBe(keyed);
    expect(jobToken({ ...parts, secret: Buffer.from('other') })).not.toBe(keyed);
  });
});
