/**
 * `--verify peers`: every node listens at the probe port on its chosen
 * address and dials every other node. The check ends when this node has
 * reached every peer and been reached by every peer, or at the deadline;
 * the listener closes then (SPEC "Verification").
 */
import { sameAddress } from '../host/ip-address.js';
import type { Logger } from '../log.js';
import { type Deadline, formatSeconds } from './clock.js';
import type { PeerPlan } from './peer-list.js';
import { type DialOutcome, reachPeer } from './probe-dial.js';
import { startProbeListener } from './probe-listener.js';
import { classifySocketError, type ReachError, type ReachFailure } from './reach-error.js';
import { PROGRESS_EVERY_MS } from './wait-for-endpoint.js';

export interface Leg {
  ok: boolean;
  error: ReachError | null;
  detail: string | null;
}

export interface PeerProbe {
  name: string;
  address: string;
  /** This node → the peer; `seen` is the source address the peer saw. */
  outbound: Leg & { seen: string | null; elapsedMs: number };
  /** The peer → this node; `source` is the source address we saw. */
  inbound: Leg & { source: string | null };
}

export interface ProbeOptions {
  plan: PeerPlan;
  localAddress: string;
  interfaceName: string;
  port: number;
  token: string;
  deadline: Deadline;
  logger: Logger;
  /** Per connection attempt; see ATTEMPT_MS. */
  attemptMs: number;
  progressEveryMs?: number;
  idleMs?: number;
}

export type ProbeOutcome =
  | { listen: ReachFailure; peers: [] }
  | { listen: null; peers: PeerProbe[] };

/** Room for every peer to dial twice at once, plus strays, before new connections are shed. */
const CONNECTIONS_PER_PEER = 2;
const SPARE_CONNECTIONS = 16;

export async function probePeers(options: ProbeOptions): Promise<ProbeOutcome> {
  const { plan, deadline } = options;
  const inbound = new Map<string, PeerProbe['inbound']>();
  let allReached: () => void = () => {};
  const reachedByAll = new Promise<void>((resolve) => {
    allReached = resolve;
  });
  const expected = new Set(plan.others.map((peer) => peer.name));
  if (expected.size === 0) allReached();

  let listener: Awaited<ReturnType<typeof startProbeListener>>;
  try {
    listener = await startProbeListener({
      address: options.localAddress,
      port: options.port,
      token: options.token,
      maxConnections: plan.others.length * CONNECTIONS_PER_PEER + SPARE_CONNECTIONS,
      ...(options.idleMs !== undefined && { idleMs: options.idleMs }),
      onHello: (hello, seen) => {
        if (!expected.has(hello.peer)) return;
        inbound.set(
          hello.peer,
          sameAddress(seen, hello.address)
            ? { ok: true, error: null, detail: null, source: seen }
            : {
                ok: false,
                error: 'wrong source address',
                detail: `saw ${seen}, it sends from ${hello.address}`,
                source: seen,
              },
        );
        if (inbound.size === expected.size) allReached();
      },
    });
  } catch (error) {
    return { listen: classifySocketError(error), peers: [] };
  }

  const lastAttempt = new Map<string, DialOutcome>();
  const progress = setInterval(
    () => logProgress(options, lastAttempt, inbound),
    options.progressEveryMs ?? PROGRESS_EVERY_MS,
  );
  const deadlineTimer = setTimeout(() => allReached(), deadline.remainingMs());
  try {
    const outbound = await Promise.all([
      Promise.all(
        plan.others.map(async (peer) => {
          const outcome = await reachPeer(
            {
              target: { address: peer.address, port: options.port },
              localAddress: options.localAddress,
              token: options.token,
              selfName: plan.self,
              deadline,
              attemptMs: options.attemptMs,
            },
            (attempt) => lastAttempt.set(peer.name, attempt),
          );
          return { peer, outcome, elapsedMs: deadline.elapsedMs() };
        }),
      ),
      reachedByAll,
    ]).then(([results]) => results);
    return {
      listen: null,
      peers: outbound.map(({ peer, outcome, elapsedMs }) => ({
        name: peer.name,
        address: peer.address,
        outbound: outboundLeg(outcome, options.localAddress, elapsedMs),
        inbound: inbound.get(peer.name) ?? {
          ok: false,
          error: 'timed out',
          detail: `did not reach ${options.localAddress}:${options.port} in ${formatSeconds(deadline.totalMs)}`,
          source: null,
        },
      })),
    };
  } finally {
    clearInterval(progress);
    clearTimeout(deadlineTimer);
    await listener.close();
  }
}

function outboundLeg(
  outcome: DialOutcome,
  localAddress: string,
  elapsedMs: number,
): PeerProbe['outbound'] {
  if (!outcome.ok)
    return { ok: false, error: outcome.error, detail: outcome.detail, seen: null, elapsedMs };
  if (!sameAddress(outcome.seen, localAddress)) {
    return {
      ok: false,
      error: 'wrong source address',
      detail: `it saw ${outcome.seen}, we sent from ${localAddress}`,
      seen: outcome.seen,
      elapsedMs,
    };
  }
  return { ok: true, error: null, detail: null, seen: outcome.seen, elapsedMs };
}

const LISTED_IN_PROGRESS = 5;

function logProgress(
  options: ProbeOptions,
  lastAttempt: ReadonlyMap<string, DialOutcome>,
  inbound: ReadonlyMap<string, unknown>,
): void {
  const pending: string[] = [];
  for (const peer of options.plan.others) {
    const attempt = lastAttempt.get(peer.name);
    const waits: string[] = [];
    if (attempt === undefined || !attempt.ok) {
      waits.push(
        `to ${peer.address}:${options.port}${attempt && !attempt.ok ? `: ${attempt.error}` : ''}`,
      );
    }
    if (!inbound.has(peer.name)) waits.push('has not reached us');
    if (waits.length > 0) pending.push(`${peer.name} (${waits.join('; ')})`);
  }
  if (pending.length === 0) return;
  const more =
    pending.length > LISTED_IN_PROGRESS ? `, and ${pending.length - LISTED_IN_PROGRESS} more` : '';
  options.logger.info(
    `waiting for ${pending.length} of ${options.plan.others.length} peers via ${options.interfaceName}, ${Math.round(options.deadline.elapsedMs() / 1000)}s of ${formatSeconds(options.deadline.totalMs)}: ${pending.slice(0, LISTED_IN_PROGRESS).join(', ')}${more}`,
  );
}
