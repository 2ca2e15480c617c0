/**
 * The meeting point's membership (issue 21): with --probe-secret-file the
 * job's token is an HMAC under the secret (membership/token.ts), the same
 * on every node that reads the same bytes, and a file that cannot serve as
 * one is one line naming it. The log says which membership holds: under
 * Slurm a MUNGE credential where munge made one, a warning where it could
 * not.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { storeRole } from '../../../src/job/store-role.js';
import { jobToken } from '../../../src/membership/token.js';
import { meetingPoint, membershipLine } from '../../../src/peers/meeting-point.js';
import { makeJob } from '../../fixtures/job-shape.js';

const parts = { master: { host: 'node01', port: 29500 }, jobId: '7002', probePort: 29500 };
const dir = mkdtempSync(join(tmpdir(), 'ncr-probe-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const meet = async (secretFile: string | null) => {
  const job = makeJob();
  const master = job.master as NonNullable<typeof job.master>;
  const facts = { hostname: 'node01', interfaces: [], routes: [] };
  const meeting = await meetingPoint({
    job,
    probePort: 29500,
    masterAddresses: ['127.0.0.1'],
    family: 'ipv4',
    role: await storeRole(job, master, ['127.0.0.1'], facts, 'ipv4'),
    secretFile,
  });
  if (meeting === null) throw new Error('a job with a master always has a meeting point');
  return meeting;
};

describe('the meeting point with --probe-secret-file', () => {
  it('reads the same secret from files that differ only in surrounding whitespace, and says which membership holds', async () => {
    const a = await meet(file('a', 's3cret\n'));
    const b = await meet(file('b', '  s3cret'));
    expect(a.token).toBe(b.token);
    expect(a.token).toBe(
      jobToken({
        ...parts,
        jobId: null,
        master: { host: '127.0.0.1', port: 29500 },
        secret: Buffer.from('s3cret'),
      }),
    );
    expect(a.membership).toEqual({ kind: 'secret', file: join(dir, 'a') });
    expect((await meet(null)).membership).toEqual({ kind: 'token' });
  });

  it('refuses a missing or an empty secret file in one line naming it', async () => {
    await expect(meet(join(dir, 'missing'))).rejects.toThrow(ConfigError);
    await expect(meet(join(dir, 'missing'))).rejects.toThrow(
      `--probe-secret-file ${join(dir, 'missing')} cannot be read (ENOENT): every node of the job needs the same secret file`,
    );
    const empty = file('empty', ' \n');
    await expect(meet(empty)).rejects.toThrow(
      `--probe-secret-file ${empty} is empty: the secret must be the same non-empty bytes on every node`,
    );
  });
});

describe('membershipLine', () => {
  const uid = process.getuid?.() ?? 0;
  const made = { socket: '/run/munge/alt.socket', credential: 'MUNGE:AAAA:', failure: null };
  const failed = {
    socket: null,
    credential: null,
    failure:
      'Failed to access "/run/munge/munge.socket.2": No such file or directory (Did you start munged?)',
  };

  it('names MUNGE under Slurm where munge made a credential, with the secret beside it where given', async () => {
    const open = await meet(null);
    expect(membershipLine(open, made)).toEqual({
      level: 'info',
      line: `probe membership: every node proves with a MUNGE credential (munged at /run/munge/alt.socket) that it runs as uid ${uid}; a process of another user is no member`,
    });
    const keyed = await meet(file('m', 's3cret'));
    expect(membershipLine(keyed, { ...made, socket: null })).toEqual({
      level: 'info',
      line: `probe membership: every node proves the job's shared secret (${join(dir, 'm')}) and with a MUNGE credential (munged's default socket) that it runs as uid ${uid}; a process without the secret or of another user is no member`,
    });
  });

  it('says token only outside Slurm, and warns where munge failed under Slurm', async () => {
    const open = await meet(null);
    expect(membershipLine(open, null)).toMatchObject({
      level: 'info',
      line: expect.stringMatching(
        /^probe membership by token only: .* does not keep strangers out/,
      ),
    });
    expect(membershipLine(open, failed)).toMatchObject({
      level: 'warn',
      line: expect.stringMatching(
        /^probe membership by token only \(munge made no credential on this node: Failed to access .*Did you start munged\?\); a master whose munged answers refuses it\): it is derived/,
      ),
    });
  });
});
