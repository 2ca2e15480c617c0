/**
 * MUNGE credentials for the probe's membership (issue 21, item 3): where
 * Slurm says munged's socket is, that a node outside Slurm makes none, and
 * what munge says when munged is not there. What munged makes of a
 * credential is munge-decode.test.ts's; what the registry admits,
 * admission.test.ts's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mungeEncode, mungeSocketIn, slurmCredential } from '../../../src/membership/munge.js';
import { unsignedRegistration } from '../../fixtures/registration.js';
import { mungeUnavailable } from '../../lab/munged.js';
import { tier } from '../../lab/tier.js';

describe('mungeSocketIn', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-munge-conf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const conf = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it("reads slurm.conf's AuthInfo socket= as Slurm's auth/munge does, else munge's own default", async () => {
    expect(
      await mungeSocketIn(
        conf('a', 'ClusterName=x\nauthinfo=ttl=60,socket=/run/munge/alt.socket # ours\n'),
      ),
    ).toBe('/run/munge/alt.socket');
    expect(await mungeSocketIn(conf('b', '#AuthInfo=socket=/nope\nAuthType=auth/munge\n'))).toBe(
      null,
    );
    expect(await mungeSocketIn(join(dir, 'missing'))).toBe(null);
  });

  it('makes no credential outside Slurm', async () => {
    expect(await slurmCredential(null, unsignedRegistration(), 60)).toBeNull();
  });
});

tier('mungeEncode', mungeUnavailable, () => {
  it('says why when munged is not there', async () => {
    expect(await mungeEncode('payload', join(tmpdir(), 'no-munged.socket'), 60)).toEqual({
      ok: false,
      reason: expect.stringMatching(/Failed to access .*no-munged\.socket.*Did you start munged\?/),
    });
  });
});
