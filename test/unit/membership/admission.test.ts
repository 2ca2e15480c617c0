/**
 * What a registration must prove (issue 21, item 3). Its claim, on
 * loopback with real sockets: a claim from its own address is admitted at
 * once; a claim from elsewhere is admitted once the claimed address and
 * port answer the registry's dial-back with the registering node's proof,
 * and is no member when someone else answers there or nothing does. Its
 * MUNGE credential, against a real, private munged: the same uid with this
 * registration's payload is a member, asked again with the same bytes
 * still; another uid, another registration's payload, a replay from
 * elsewhere, an expired credential or none at all is not.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Admission } from '../../../src/membership/admission.js';
import { newProofKey } from '../../../src/membership/claim-proof.js';
import {
  credentialPayload,
  mungeSocketIn,
  slurmCredential,
} from '../../../src/membership/munge.js';
import type { Register } from '../../../src/probe/protocol.js';
import {
  claimAdmission as admission,
  type Closers,
  claim,
  provingNodes,
} from '../../fixtures/dial-back.js';
import { privateMunged } from '../../fixtures/private-munged.js';
import { TEST_TOKEN as TOKEN, unsignedRegistration } from '../../fixtures/registration.js';
import { mungeUnavailable } from '../../lab/munged.js';
import { tier, tierTest } from '../../lab/tier.js';

const UID = process.getuid?.() ?? 0;

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
const { nodeService, countingService } = provingNodes(closers);

describe('Admission of a claimed address', () => {
  it('admits a registration from the address it claims at once, with no turn of the loop', () => {
    expect(admission().check(claim('127.0.0.2', 40_000, newProofKey()), '127.0.0.2')).toEqual({
      ok: true,
    });
  });

  it('admits one from another address once its service there proves the claim, and asks only once', async () => {
    const key = newProofKey();
    const service = await countingService('127.0.0.3', key);
    const log = { proven: [] as string[], refused: [] as string[] };
    const check = admission(log);
    const request = claim('127.0.0.3', service.port, key);
    const verdict = check.check(request, '127.0.0.2');
    expect(verdict).toBeInstanceOf(Promise);
    expect(await verdict).toEqual({ ok: true });
    // The node asks again with the same bytes (a poll): no second dial-back.
    expect(await check.check(request, '127.0.0.2')).toEqual({ ok: true });
    expect(service.proves).toHaveLength(1);
    expect(log).toEqual({ proven: ['node-b 127.0.0.2'], refused: [] });
  });

  it("refuses a claim of another node's address and port, which that node's service answers under its own key", async () => {
    const port = await nodeService('127.0.0.3', newProofKey());
    const log = { proven: [] as string[], refused: [] as string[] };
    const verdict = await admission(log).check(
      claim('127.0.0.3', port, newProofKey()),
      '127.0.0.9',
    );
    const reason = `node-b (rank 1) registered from 127.0.0.9 claiming 127.0.0.3:${port}, where something else answers (a proof under another key): not a member; that address and port are another's, so check which host holds 127.0.0.3`;
    expect(verdict).toEqual({ ok: false, reason });
    expect(log.refused).toEqual([reason]);
  });

  it('refuses a claim where nothing listens (an absent node), naming the port range to check', async () => {
    // A port that was just free: nothing of the job listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.4', () => {
        const { port: free } = server.address() as { port: number };
        server.close(() => resolve(free));
      });
    });
    expect(await admission().check(claim('127.0.0.4', port, newProofKey()), '127.0.0.9')).toEqual({
      ok: false,
      reason: `node-b (rank 1) registered from 127.0.0.9 claiming 127.0.0.4:${port}, which the master cannot reach to prove it (refused, ECONNREFUSED): not a member; check that 127.0.0.4 is that node's and that a firewall there lets the master reach its ephemeral ports (net.ipv4.ip_local_port_range 32768-60999 on node-b)`,
    });
  });
});

tier('Admission by MUNGE, through a real munged', mungeUnavailable, () => {
  const munged = privateMunged();
  const mungeAdmission = () =>
    new Admission({
      token: TOKEN,
      localAddress: '127.0.0.1',
      munge: { socket: munged.socket, uid: UID },
    });
  /** A registration from its own address with this node's credential for it. */
  const signed = async (overrides: Partial<Register> = {}): Promise<Register> => {
    const made = await slurmCredential(
      { socket: await mungeSocketIn(munged.env.SLURM_CONF as string) },
      unsignedRegistration(overrides),
      60,
    );
    expect(made).toMatchObject({ socket: munged.socket, failure: null });
    return { ...unsignedRegistration(overrides), munge: made?.credential ?? null };
  };

  it('admits the same uid with this registration, also when the node asks again with the same bytes', async () => {
    const check = mungeAdmission();
    const request = await signed();
    expect(await check.check(request, '198.18.20.2')).toEqual({ ok: true });
    // munged alone would call this a replay; the registry knows it accepted it.
    expect(await check.check(request, '198.18.20.2')).toEqual({ ok: true });
  });

  it('refuses the same credential from another source, as the replay munged would refuse', async () => {
    const check = mungeAdmission();
    const request = await signed();
    await check.check(request, '198.18.20.2');
    expect(await check.check(request, '198.18.20.9')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential came before from 198.18.20.2, and now from 198.18.20.9: a replay, not a member",
    });
    // A second registry (a rerun's) that never saw it: munged itself refuses it.
    expect(await mungeAdmission().check(request, '198.18.20.9')).toEqual({
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
          credentialPayload(unsignedRegistration()),
        ],
        { encoding: 'utf8' },
      ).trim();
      expect(
        await mungeAdmission().check({ ...unsignedRegistration(), munge: nobody }, '198.18.20.2'),
      ).toEqual({
        ok: false,
        reason: `node02 (rank 1)'s MUNGE credential is of uid 65534, and this job's probe runs as uid ${UID}: not a member`,
      });
    },
  );

  it("refuses a credential made for another registration: another port, another job's token", async () => {
    const other = await signed({ port: 41_001 });
    const moved = { ...unsignedRegistration(), munge: other.munge };
    expect(await mungeAdmission().check(moved, '198.18.20.2')).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential was made for another registration (its job token, name, address or port differ): not a member",
    });
  });

  it('refuses a registration without a credential, and an expired one', async () => {
    expect(
      await mungeAdmission().check({ ...unsignedRegistration(), munge: null }, '198.18.20.2'),
    ).toEqual({
      ok: false,
      reason:
        "node02 (rank 1) sent no MUNGE credential, and this Slurm job's probe membership is by MUNGE: not a member; is munged running on node02? (its own log says why munge failed)",
    });
    const expired = execFileSync(
      'munge',
      [
        '--socket',
        munged.socket,
        '--ttl',
        '1',
        '--string',
        credentialPayload(unsignedRegistration()),
      ],
      { encoding: 'utf8' },
    ).trim();
    // munged's own rule: expired once DECODE_TIME passes ENCODE_TIME + TTL (whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(
      await mungeAdmission().check({ ...unsignedRegistration(), munge: expired }, '198.18.20.2'),
    ).toEqual({
      ok: false,
      reason:
        "node02 (rank 1)'s MUNGE credential is refused by munged (Expired credential): not a member",
    });
  });
});
