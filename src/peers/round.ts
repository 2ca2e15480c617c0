/**
 * One round at the meeting point, the same for `agree`'s publish and the
 * peers check's registration: on the store host the registry starts (with
 * torch's port-in-use fallback to a client) and this node joins it
 * in-process; elsewhere the node joins over TCP, as torch's store client
 * reaches the store. The registry's shape (completion, --peers resolved in
 * the rendezvous' family, descriptor capacity) is decided here once, so
 * that the two rounds cannot drift apart.
 */
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import type { Admission } from '../membership/admission.js';
import { resolvePeers } from '../membership/peer-list.js';
import { type Outgoing, PROTOCOL_VERSION } from '../probe/protocol.js';
import type { ProbeService, ProbeServiceOptions } from '../probe/service.js';
import type { Deadline } from '../reach/clock.js';
import type { ReachFailure } from '../reach/reach-error.js';
import type { Round } from '../registry/entry.js';
import { Registry } from '../registry/registry.js';
import { type JoinOutcome, joinLocally, joinRegistry } from './join.js';
import { holdCapacity, type MeetingPoint, startRegistry } from './meeting-point.js';

/** Asks in a row that the port takes but answers as no probe: torch's store, not a loaded registry. */
export const FOREIGN_ASKS = 3;

export interface RoundInput<R extends Round> {
  meeting: MeetingPoint;
  job: JobShape;
  request: Extract<Outgoing, { kind: R }>;
  /** The address the master would see itself come from, for its own in-process join. */
  seen: string;
  /** --peers; null or empty: every node that registers. */
  restrict: readonly string[] | null;
  deadline: Deadline;
  logger: Logger;
  attemptMs: number;
  /** A hello at the probe port (the mesh's diagnosis of a firewall). */
  onHello?: ProbeServiceOptions['onHello'];
  /** What a registration must prove (membership/admission.ts); the registry's, where this node hosts it. */
  admission?: Admission;
}

export type RoundOutcome<R extends Round> =
  /** This node hosts the registry and its service could not start. */
  | { kind: 'failed'; failure: ReachFailure }
  | {
      kind: 'joined';
      joined: JoinOutcome;
      /** This node's registry, or null where another node hosts it. */
      registry: Registry<R> | null;
      /** Closes the registry's service: after every member had its answer. */
      close(): Promise<void>;
    };

export async function joinRound<R extends Round>(
  round: R,
  input: RoundInput<R>,
): Promise<RoundOutcome<R>> {
  const { meeting, job, deadline, logger } = input;
  let service: ProbeService | null = null;
  let registry: Registry<R> | null = null;
  if (meeting.hostsRegistry) {
    const restrict = input.restrict ?? [];
    const foreign = new Set<string>();
    const started = await startRegistry(
      meeting,
      new Registry({
        round,
        token: meeting.token,
        ...registryShape(job),
        nodeList: job.clusterPeers,
        restrict: restrict.length > 0 ? await resolvePeers(restrict, meeting.family) : null,
        holdCapacity: await holdCapacity(),
        ...(input.admission !== undefined && { admission: input.admission }),
        onReplaced: (name, was, now) =>
          logger.info(
            `${name} registered again from ${now}; its registration from ${was} no longer answers there (a pod made anew, a node back with another address): replaced`,
          ),
      }),
      job.nnodes.max,
      {
        ...(input.onHello !== undefined && { onHello: input.onHello }),
        // Once per address: such a node asks again and again until its timeout.
        onForeignVersion: (version, seen) => {
          if (foreign.has(seen)) return;
          foreign.add(seen);
          logger.warn(
            `a node at ${seen} registers in probe protocol v${version}, this nccl-run's is v${PROTOCOL_VERSION}: it runs another nccl-run release, and is no member until every node runs one release`,
          );
        },
      },
    );
    if (started.kind === 'failed') return started;
    if (started.kind === 'started') {
      service = started.service;
      registry = started.registry;
    }
  }
  const close = async () => {
    registry?.close();
    await service?.close();
  };
  try {
    const joined =
      registry !== null
        ? await joinLocally({
            registry,
            request: input.request,
            seen: input.seen,
            token: meeting.token,
            deadline,
            logger,
            where: `${meeting.master.host} at port ${meeting.port}`,
          })
        : await joinRegistry({
            target: meeting.target,
            masterName: meeting.master.host,
            request: input.request,
            token: meeting.token,
            deadline,
            logger,
            attemptMs: input.attemptMs,
            nodes: job.nnodes.max,
            // An elastic job's store host runs torch's store at the port once the rendezvous completed.
            ...(registryShape(job).lastCallMs !== null && { foreignLimit: FOREIGN_ASKS }),
          });
    return { kind: 'joined', joined, registry, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The registry's completion rule, torch's c10d one for an elastic job
 * (dynamic_rendezvous.py): MAX at once, MIN after the last call. The
 * static backend waits for MAX nodes (static_tcp_rendezvous.py: world size
 * is max_nodes), and so does a fixed size.
 */
export function registryShape(job: JobShape): {
  expected: number;
  minimum: number;
  lastCallMs: number | null;
} {
  const { min, max } = job.nnodes;
  if (job.rdzvBackend === 'static' || min === max) {
    return { expected: max, minimum: max, lastCallMs: null };
  }
  return {
    expected: max,
    minimum: min,
    lastCallMs: job.lastCallTimeoutS * 1_000,
  };
}
