/**
 * Whether a registration's claimed address and port are the registering
 * node's own (SPEC "Real jobs"), for the case where its connection came
 * from elsewhere: a node reaches the master by the name torch resolves
 * (often the management network) and claims its chosen data address, or a
 * NAT or Docker's userland proxy rewrites its source. Plain equality would
 * refuse those real jobs, so the registry dials the claim back: the node's
 * registration carries a fresh random key that only its probe service holds
 * (in memory, for this check), the registry sends a nonce to the claimed
 * address and port, and the service answers with an HMAC of it under that
 * key. A process that claims another node's address reaches, through the
 * registry, that node's service, which answers under its own key, not the
 * one the stranger sent; a claim of an address where nothing of the job
 * listens (an absent node's) gets no proof at all.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { probeRequest } from '../probe/dial.js';
import { encodeMessage } from '../probe/protocol.js';
import { proofMac } from '../probe/service.js';
import { formatSeconds } from '../reach/clock.js';
import type { ReachFailure } from '../reach/reach-error.js';

/** A node's key for one check; also the size of a nonce. */
export function newProofKey(): string {
  return randomBytes(16).toString('hex');
}

export type ClaimOutcome =
  | { ok: true }
  /** Something answered, under another key or as no probe of this job: someone else's address or port. */
  | { ok: false; answered: true; detail: string }
  /** Nothing answered there: no node of the job listens at the claim, or a firewall stops the registry. */
  | ({ ok: false; answered: false } & ReachFailure);

export interface ClaimCheck {
  address: string;
  port: number;
  /** The key the registration carried. */
  key: string;
  token: string;
  /** The registry's own chosen address, the dial-back's source, as the mesh dials from it. */
  localAddress: string;
  limitMs: number;
}

export async function proveClaim(claim: ClaimCheck): Promise<ClaimOutcome> {
  const nonce = newProofKey();
  const outcome = await probeRequest<{ ok: true }>({
    target: { address: claim.address, port: claim.port },
    localAddress: claim.localAddress,
    limitMs: claim.limitMs,
    timedOut: (connected) => ({
      error: connected ? 'no handshake' : 'timed out',
      detail: `${connected ? 'no proof' : 'no answer'} in ${formatSeconds(claim.limitMs)}`,
    }),
    onConnect: (socket) =>
      socket.write(encodeMessage({ kind: 'prove', token: claim.token, nonce })),
    answer: (message) => {
      if (message.kind === 'reject' && message.reason === 'token') {
        return { ok: false, error: 'other job', detail: 'a service of another job answered' };
      }
      if (message.kind !== 'proof' || message.token !== claim.token) return undefined;
      const expected = Buffer.from(proofMac(claim.key, claim.token, nonce), 'hex');
      return timingSafeEqual(expected, Buffer.from(message.mac, 'hex'))
        ? { ok: true }
        : { ok: false, error: 'no handshake', detail: 'a proof under another key' };
    },
    closedDetail: 'closed without a proof',
  });
  if (outcome.ok) return outcome;
  const answered = outcome.error === 'no handshake' || outcome.error === 'other job';
  return answered
    ? { ok: false, answered: true, detail: outcome.detail }
    : { ok: false, answered: false, error: outcome.error, detail: outcome.detail };
}
