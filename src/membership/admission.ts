/**
 * What a registration must prove before the registry counts it (SPEC "Real
 * jobs", issue 21): that its claimed address and port are the registering
 * node's own, and, under Slurm where munged answers, that it runs as the
 * same user as the registry.
 *
 * The claim: a registration whose connection came from the address it
 * claims is admitted at once, with no round trip (the common case, and the
 * 4,096-node bench's); one from elsewhere (the management network the
 * master's name resolves to, a NAT) is admitted once the claimed address
 * and port answer the registry's dial-back with the node's proof
 * (claim-proof.ts). It is no member where someone else answers there (a
 * stranger claiming another node's address and port) or where the kernel
 * there refuses (a stranger claiming an address where no service of the
 * job listens, an absent node's; or a REJECT rule, told the range to
 * open). Where the dial-back meets silence (a firewall that drops, which
 * most that open only the rendezvous port do), it is counted unproven and
 * logged: nothing answers there, so every node that dials the claim fails,
 * and the mesh says why (ephemeral ports blocked, peers/mesh.ts) in seconds,
 * where a refusal would leave the others waiting to their timeout.
 *
 * MUNGE (munge.ts): the credential must decode (unexpired, not replayed),
 * be of the registry's own uid and carry this registration's payload. A
 * node asks again with the same bytes while it waits (peers/join.ts), and
 * munged would call the second decode a replay: a credential accepted
 * once is remembered with the source it came from, and the same bytes
 * from another source are the replay munged would have refused.
 */
import { sameAddress } from '../host/ip-address.js';
import type { Register } from '../probe/protocol.js';
import { proveClaim } from './claim-proof.js';
import { credentialPayload } from './munge.js';
import { mungeDecode } from './munge-decode.js';

/** Dial-backs in flight at once: a fleet registering from its management addresses arrives in one burst. */
const DIAL_BACK_CONCURRENCY = 64;
/** Decodes in flight at once: munged's own worker threads (2 by default, munged --num-threads) take them in turn. */
const DECODE_CONCURRENCY = 16;
/**
 * A node's service answers in a round trip; past this the claim is taken
 * unproven (silence). Short, as a dropping firewall costs every node with
 * that claim this long before it is counted: the mesh's own diagnosis
 * comes after it.
 */
const DIAL_BACK_MS = 1_000;

export type Verdict =
  | { ok: true }
  | {
      ok: false;
      /** One line for the refused node and the master's log: what was claimed, from where, what to check. */
      reason: string;
    };

export interface AdmissionOptions {
  token: string;
  /** The registry's own chosen address: dial-backs leave from it, as the mesh's dials do. */
  localAddress: string;
  /** Membership by MUNGE: the socket of munged, and the uid every member must be; null: none. */
  munge: { socket: string | null; uid: number } | null;
  /** A registration from another address than its claim, proven; for the master's log. */
  onProven?: (request: Register, seen: string) => void;
  /** A registration refused, and why; for the master's log. */
  onRefused?: (reason: string) => void;
  /** A claim taken unproven, silence where the dial-back went, and why; for the master's log. */
  onUnproven?: (line: string) => void;
  dialBackMs?: number;
}

const ADMITTED: Verdict = { ok: true };

export class Admission {
  /** Claims already proven, by source, address, port and key: a node's re-asks cost no dial-back. */
  private readonly proven = new Set<string>();
  /** Credentials munged accepted, and the source and payload each came with. */
  private readonly credentials = new Map<string, { seen: string; payload: string }>();
  private readonly dialBacks = bounded(DIAL_BACK_CONCURRENCY);
  private readonly decodes = bounded(DECODE_CONCURRENCY);

  constructor(private readonly options: AdmissionOptions) {}

  /** Synchronous where nothing needs proving, so that the common case costs no turn of the loop. */
  check(request: Register, seen: string): Verdict | Promise<Verdict> {
    const fromClaim = seen === request.address || sameAddress(seen, request.address);
    if (fromClaim && this.options.munge === null) return ADMITTED;
    return this.prove(request, seen, fromClaim);
  }

  /**
   * Whether the node that made `held` still runs its check: its probe
   * service answers at the registered address and port under that
   * registration's key. A pod made anew (same name and rank, new addresses)
   * or a node back with another address replaces an entry only when this
   * says no: a second live node under one name is two nodes claiming it.
   */
  async stillThere(held: Register): Promise<boolean> {
    const outcome = await this.dialBacks(() =>
      proveClaim({
        address: held.address,
        port: held.port,
        key: held.proofKey,
        token: this.options.token,
        localAddress: this.options.localAddress,
        limitMs: this.options.dialBackMs ?? DIAL_BACK_MS,
      }),
    );
    return outcome.ok;
  }

  private async prove(request: Register, seen: string, fromClaim: boolean): Promise<Verdict> {
    let verdict = ADMITTED;
    if (this.options.munge !== null) {
      verdict = await this.checkCredential(request, seen, this.options.munge);
    }
    if (verdict.ok && !fromClaim) verdict = await this.checkClaim(request, seen);
    if (!verdict.ok) this.options.onRefused?.(verdict.reason);
    return verdict;
  }

  private async checkClaim(request: Register, seen: string): Promise<Verdict> {
    const claim = `${seen} ${request.address} ${request.port} ${request.proofKey}`;
    if (this.proven.has(claim)) return ADMITTED;
    const outcome = await this.dialBacks(() =>
      proveClaim({
        address: request.address,
        port: request.port,
        key: request.proofKey,
        token: this.options.token,
        localAddress: this.options.localAddress,
        limitMs: this.options.dialBackMs ?? DIAL_BACK_MS,
      }),
    );
    const claimed = `${who(request)} registered from ${seen} claiming ${request.address}:${request.port}`;
    if (outcome.ok) {
      this.proven.add(claim);
      this.options.onProven?.(request, seen);
      return ADMITTED;
    }
    if (outcome.answered) {
      return refuse(
        `${claimed}, where something else answers (${outcome.detail}): not a member; that address and port are another's, so check which host holds ${request.address}`,
      );
    }
    const [low, high] = request.portRange;
    const firewall = `a firewall there lets the master reach its ephemeral ports (net.ipv4.ip_local_port_range ${low}-${high} on ${request.node.name})`;
    if (outcome.error === 'timed out') {
      // Silence: a firewall that drops (or a dead host). A claim nobody can
      // reach makes no check pass, since the mesh dials it too, and the
      // mesh tells a firewall on the ephemeral ports apart (peers/mesh.ts).
      this.options.onUnproven?.(
        `${claimed}, which did not answer the master's dial-back (${outcome.detail}): counted unproven, for the mesh to check (a firewall on ${request.node.name} dropping its ephemeral ports, net.ipv4.ip_local_port_range ${low}-${high}, or no host at ${request.address})`,
      );
      return ADMITTED;
    }
    return refuse(
      `${claimed}, which the master cannot reach to prove it (${outcome.error}, ${outcome.detail}): not a member; check that ${request.address} is that node's and that ${firewall}`,
    );
  }

  private async checkCredential(
    request: Register,
    seen: string,
    munge: NonNullable<AdmissionOptions['munge']>,
  ): Promise<Verdict> {
    const name = who(request);
    if (request.munge === null) {
      return refuse(
        `${name} sent no MUNGE credential, and this Slurm job's probe membership is by MUNGE: not a member; is munged running on ${request.node.name}? (its own log says why munge failed)`,
      );
    }
    const payload = credentialPayload(request);
    const accepted = this.credentials.get(request.munge);
    if (accepted !== undefined) {
      if (accepted.seen !== seen) {
        return refuse(
          `${name}'s MUNGE credential came before from ${accepted.seen}, and now from ${seen}: a replay, not a member`,
        );
      }
      return accepted.payload === payload ? ADMITTED : mismatch(name);
    }
    const decoded = await this.decodes(() => mungeDecode(request.munge as string, munge.socket));
    if (!decoded.ok) {
      return refuse(
        `${name}'s MUNGE credential is refused by munged (${decoded.reason}): not a member`,
      );
    }
    if (decoded.uid !== munge.uid) {
      return refuse(
        `${name}'s MUNGE credential is of uid ${decoded.uid}, and this job's probe runs as uid ${munge.uid}: not a member`,
      );
    }
    if (decoded.payload !== payload) return mismatch(name);
    this.credentials.set(request.munge, { seen, payload });
    return ADMITTED;
  }
}

function mismatch(name: string): Verdict {
  return refuse(
    `${name}'s MUNGE credential was made for another registration (its job token, name, address or port differ): not a member`,
  );
}

function who(request: Register): string {
  return request.node.rank === null
    ? request.node.name
    : `${request.node.name} (rank ${request.node.rank})`;
}

/** The reject message's bound (probe/protocol.ts): a long name or address shortens the advice, not the schema. */
const MAX_REASON = 400;

function refuse(reason: string): Verdict {
  return {
    ok: false,
    reason: reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 3)}...` : reason,
  };
}

/** Runs at most `limit` tasks at once, the rest in the order they came. */
function bounded(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: (() => void)[] = [];
  return async (task) => {
    // A finished task hands its slot to the next in the queue, so none starts past the limit.
    if (running < limit) running += 1;
    else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await task();
    } finally {
      const next = queue.shift();
      if (next === undefined) running -= 1;
      else next();
    }
  };
}
