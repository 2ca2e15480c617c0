/**
 * MUNGE membership (issue 21, item 3) against a real, private munged
 * (test/lab/munged.ts): what munge and unmunge answer, where Slurm says the
 * socket is, and what the registry's admission makes of a credential: the
 * same uid with this registration's payload is a member, asked again with
 * the same bytes still; another uid, another registration's payload, a
 * replay from elsewhere, an expired credential or none at all is not.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admission } from '../../src/membership/admission.js';
import {
  credentialPayload,
  mungeEncode,
  slurmCredential,
  slurmMungeSocket,
} from '../../src/membership/munge.js';
import { mungeDecode } from '../../src/membership/munge-decode.js';
import type { Register } from '../../src/probe/protocol.js';
import { registration } from '../fixtures/registration.js';
import { mungeUnavailable, startMunged } from '../lab/munged.js';
import { tier, tierTest } from '../lab/tier.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const UID = process.getuid?.() ?? 0;

function claim(overrides: Partial<Register> = {}): Omit<Register, 'munge'> {
  const { munge: _none, ...request } = registration({
    token: TOKEN,
    node: { name: 'node02', rank: 1 },
    proofKey: 'ab'.repeat(16),
    ...overrides,
  });
  return request;
}

describe('slurmMungeSocket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-munge-conf-'));
  const conf = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return { SLURM_CONF: join(dir, name) };
  };

  it("reads slurm.conf's AuthInfo socket= as Slurm's auth/munge does, else munge's own default", async () => {
    expect(
      await slurmMungeSocket(
        conf('a', 'ClusterName=x\nauthinfo=ttl=60,socket=/run/munge/alt.socket # ours\n'),
      ),
    ).toBe('/run/munge/alt.socket');
    expect(await slurmMungeSocket(conf('b', '#AuthInfo=socket=/nope\nAuthType=auth/munge\n'))).toBe(
      null,
    );
    expect(await slurmMungeSocket({ SLURM_CONF: join(dir, 'missing') })).toBe(null);
  });

  it('makes no credential outside Slurm', async () => {
    expect(await slurmCredential(null, claim(), 60)).toBeNull();
  });
});

tier('MUNGE credentials through a real munged', mungeUnavailable, () => {
  let munged: Awaited<ReturnType<typeof startMunged>>;
  let env: { SLURM_CONF: string };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ncr-munged-'));
    munged = await startMunged(dir);
    env = { SLURM_CONF: join(dir, 'slurm.conf') };
    writeFileSync(env.SLURM_CONF, `AuthType=auth/munge\nAuthInfo=socket=${munged.socket}\n`);
  });
  afterAll(async () => {
    await munged?.stop();
  });

  const admission = () =>
    new Admission({
      token: TOKEN,
      localAddress: '127.0.0.1',
      munge: { socket: munged.socket, uid: UID },
    });
  /** A registration from its own address with this node's credential for it. */
  const signed = async (overrides: Partial<Register> = {}): Promise<Register> => {
    const made = await slurmCredential(
      { socket: await slurmMungeSocket(env) },
      claim(overrides),
      60,
    );
    expect(made).toMatchObject({ socket: munged.socket, failure: null });
    return { ...claim(overrides), munge: made?.credential ?? null };
  };

  it('decodes its own credential once, with this uid and the payload; a second decode is a replay', async () => {
    const encoded = await mungeEncode('payload', munged.socket, 60);
    if (!encoded.ok) throw new Error(encoded.reason);
    expect(encoded.credential).toMatch(/^MUNGE:[A-Za-z0-9+/=]+:$/);
    expect(await mungeDecode(encoded.credential, munged.socket)).toEqual({
      ok: true,
      uid: UID,
      payload: 'payload',
    });
    expect(await mungeDecode(encoded.credential, munged.socket)).toEqual({
      ok: false,
      status: 17,
      reason: 'Replayed credential',
    });
  });

  it('says why when munged is not there', async () => {
    expect(await mungeEncode('payload', join(tmpdir(), 'no-munged.socket'), 60)).toEqual({
      ok: false,
      reason: expect.stringMatching(/Failed to access .*no-munged\.socket.*Did you start munged\?/),
    });
  });

  it('admits the same uid with this registration, also when the node asks again with the same bytes', async () => {
    const check = admission();
    const request = await signed();
    expect(await check.check(request, '198.18.20.2')).toEqual({ ok: true });
    // munged alone would call this a replay; the registry knows it accepted it.
    expect(await check.check(request, '198.18.20.2')).toEqual({ ok: true });
  });

  it('refuses the same credential from another source, as the replay munged would refuse', async () => {
    const check = admission();
    const request = await signed();
    await check.check(request, '198.18.20.2');
    expect(await check.check(request, '198.18.20.9')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential came before from 198.18.20.2, and now from 198.18.20.9: a replay, not a member",
    });
    // A second registry (a rerun's) that never saw it: munged itself refuses it.
    expect(await admission().check(request, '198.18.20.9')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential is refused by munged (Replayed credential): not a member",
    });
  });

  tierTest(
    'refuses a credential of another uid',
    UID === 0 ? null : 'making a credential as uid 65534 (setpriv) needs root',
    async () => {
      const nobody = execFileSync(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          'munge',
          '--socket',
          munged.socket,
          '--string',
          credentialPayload(claim()),
        ],
        { encoding: 'utf8' },
      ).trim();
      expect(await admission().check({ ...claim(), munge: nobody }, '198.18.20.2')).toEqual({
        ok: false,
        reason: `node02 (rank 1)'s MUNGE credential is of uid 65534, and this job's probe runs as uid ${UID}: not a member`,
      });
    },
  );

  it("refuses a credential made for another registration: another port, another job's token", async () => {
    const other = await signed({ port: 41_001 });
    const moved = { ...claim(), munge: other.munge };
    expect(await admission().check(moved, '198.18.20.2')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential was made for another registration (its job token, name, address or port differ): not a member",
    });
  });

  it('refuses a registration without a credential, and an expired one', async () => {
    expect(await admission().check({ ...claim(), munge: null }, '198.18.20.2')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1) sent no MUNGE credential, and this Slurm job's probe membership is by MUNGE: not a member; is munged running on node02? (its own log says why munge failed)",
    });
    const expired = execFileSync(
      'munge',
      ['--socket', munged.socket, '--ttl', '1', '--string', credentialPayload(claim())],
      { encoding: 'utf8' },
    ).trim();
    // munged's own rule: expired once DECODE_TIME passes ENCODE_TIME + TTL (whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await admission().check({ ...claim(), munge: expired }, '198.18.20.2')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential is refused by munged (Expired credential): not a member",
    });
  });
});
