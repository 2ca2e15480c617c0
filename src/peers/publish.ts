/**
 * The rendezvous step before the chain, for SPEC `agree`: every node
 * publishes its usable interfaces (network, address, speed, RDMA device)
 * to the master's probe service, reached as torch's store will be, and gets
 * back the networks every node has. The master runs that service for this
 * round and closes it once every node has the table; `--verify peers` then
 * opens the next round, the registration of the chosen addresses, on the
 * same port. Nodes that come early to it are told to ask again.
 *
 * It runs only where the rendezvous is available: --verify peers (the level
 * at which every node takes part), a master to meet at, more than one node.
 * Otherwise the strategy is told why and skips. A node that never comes is
 * exit 75, named (SPEC strategy table).
 */

import { UnreachableError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import type { Options } from '../options/option-table.js';
import { reaches } from '../options/verify-level.js';
import {
  encodeMessage,
  MAX_NETWORKS,
  type NodeIdentity,
  type PublishedNetwork,
} from '../probe/protocol.js';
import { ATTEMPT_MS } from '../reach/backoff.js';
import { deadlineIn, formatSeconds, untilDeadline } from '../reach/clock.js';
import { endpointText } from '../reach/endpoint.js';
import type { Agreement } from '../resolve/agreement.js';
import { candidates } from '../resolve/candidates.js';
import type { ResolveContext } from '../resolve/decision.js';
import { compareBySpeed } from '../resolve/speed-ranking.js';
import { waitingText } from './join.js';
import type { MeetingPoint } from './meeting-point.js';
import { joinRound } from './round.js';

export interface PublishInput {
  options: Pick<Options, 'verify' | 'verifyTimeout' | 'peers'>;
  job: JobShape;
  facts: HostFacts;
  /** The context the chain will run with: excludes and family decide what is usable. */
  context: ResolveContext;
  /** The plan's, the peers check's too; null below --verify peers, or with nobody to meet. */
  meeting: MeetingPoint | null;
  logger: Logger;
}

export async function publishNetworks(input: PublishInput): Promise<Agreement> {
  const { options, job, facts, context, meeting, logger } = input;
  if (!reaches(options.verify, 'peers')) {
    return {
      kind: 'unavailable',
      reason: `the nodes meet only with --verify peers (the level is ${options.verify})`,
    };
  }
  if (context.singleNode)
    return { kind: 'unavailable', reason: 'a single-node job: nothing to agree with' };
  if (meeting === null) return { kind: 'unavailable', reason: 'no master to meet at' };
  const { token, target, master, port } = meeting;
  const deadline = deadlineIn(options.verifyTimeout);

  const node = {
    name: job.nodeName ?? facts.hostname,
    rank: job.nodeRank?.value ?? null,
  };
  const met = await joinRound('publish', {
    meeting,
    job,
    request: { kind: 'publish', token, node, networks: published(facts, context, token, node) },
    seen: target.address,
    restrict: options.peers,
    deadline,
    logger,
    attemptMs: ATTEMPT_MS,
  });
  if (met.kind === 'failed') {
    throw new UnreachableError(
      `agree: the probe service cannot bind ${endpointText({ address: meeting.wildcard, port })}: ${met.failure.error} (${met.failure.detail})`,
    );
  }
  const { joined, registry } = met;
  try {
    if (!joined.ok && joined.foreign) {
      return {
        kind: 'unavailable',
        reason: `${endpointText(target)} takes connections but does not answer as the probe: the elastic rendezvous had completed before this node came, and its nodes agreed without it`,
      };
    }
    if (!joined.ok) {
      const where = `the master's probe service (${master.host} at ${endpointText(target)})`;
      throw new UnreachableError(
        joined.error === 'not registered' && joined.waiting !== null
          ? `agree: not every node published its interfaces to ${where} in ${formatSeconds(deadline.totalMs)}: ${waitingText(joined.waiting)}`
          : `agree: cannot publish this node's interfaces to ${where}: ${joined.error} (${joined.detail})`,
      );
    }
    if (joined.kind !== 'table') {
      throw new UnreachableError(
        `agree: the master's probe service answered a publish with a ${joined.kind}`,
      );
    }
    // The master's service stays until every node has the table, so none is left asking.
    if (registry !== null) await untilDeadline(registry.allDelivered, deadline);
    const { nodes, common, partial, partialMore } = joined.table;
    return { kind: 'published', table: { nodes, common, partial, partialMore } };
  } finally {
    await met.close();
  }
}

/**
 * This node's candidates (usable, not excluded: what subnet, route and
 * speed choose among), each usable address one entry, fastest first, at
 * most MAX_NETWORKS and no more than one message holds.
 */
function published(
  facts: HostFacts,
  context: ResolveContext,
  token: string,
  node: NodeIdentity,
): PublishedNetwork[] {
  const entries = candidates(facts, context)
    .sort((a, b) => compareBySpeed(a.iface, b.iface))
    .flatMap(({ iface, addresses }) =>
      addresses.map((held) => ({
        interface: iface.name,
        address: held.address,
        prefixLength: held.prefixLength,
        speedMbps: iface.speedMbps,
        rdma: iface.rdma?.device ?? null,
      })),
    )
    .slice(0, MAX_NETWORKS);
  for (;;) {
    try {
      encodeMessage({ kind: 'publish', token, node, networks: entries });
      return entries;
    } catch (error) {
      if (!(error instanceof RangeError) || entries.length === 0) throw error;
      entries.pop();
    }
  }
}
