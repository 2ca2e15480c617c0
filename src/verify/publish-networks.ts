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
import { ConfigError, UnreachableError } from '../errors.js';
import type { HostFacts } from '../host/host-facts.js';
import { familyOf } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import { createLogger } from '../log.js';
import type { Options } from '../options/option-table.js';
import { candidates } from '../resolve/candidates.js';
import type { ResolveContext } from '../resolve/decision.js';
import { compareBySpeed } from '../resolve/speed-ranking.js';
import type { Agreement } from '../resolve/strategies/agree.js';
import { deadlineIn, formatSeconds, untilDeadline } from './clock.js';
import { joinRegistry, waitingText } from './join-registry.js';
import { masterRole } from './master-role.js';
import { resolvePeers } from './peer-list.js';
import { SERVICE_CONNECTIONS } from './probe-peers.js';
import {
  encodeMessage,
  MAX_NETWORKS,
  type NodeIdentity,
  type PublishedNetwork,
} from './probe-protocol.js';
import { type ProbeService, startProbeService } from './probe-service.js';
import { jobToken } from './probe-token.js';
import { classifySocketError } from './reach-error.js';
import { checkRegistryBound, Registry } from './registry.js';
import { ATTEMPT_MS, endpointText } from './wait-for-endpoint.js';

export interface PublishInput {
  options: Pick<
    Options,
    'verify' | 'verifyTimeout' | 'probePort' | 'peers' | 'logLevel' | 'logFormat'
  >;
  job: JobShape;
  facts: HostFacts;
  /** The context the chain will run with: excludes and family decide what is usable. */
  context: ResolveContext;
  masterAddresses: readonly string[];
}

export async function publishNetworks(input: PublishInput): Promise<Agreement> {
  const { options, job, facts, context } = input;
  if (options.verify !== 'peers') {
    return {
      kind: 'unavailable',
      reason: `the nodes meet only with --verify peers (the level is ${options.verify})`,
    };
  }
  if (context.singleNode)
    return { kind: 'unavailable', reason: 'a single-node job: nothing to agree with' };
  const master = job.master;
  if (master === null) return { kind: 'unavailable', reason: 'no master to meet at' };
  checkRegistryBound(job);
  const port = options.probePort ?? master.port + 1;
  if (port > 65535) {
    throw new ConfigError(
      `the probe port derived from the master port, ${port}, is outside 1-65535: give --probe-port`,
    );
  }
  const token = jobToken({ master, jobId: job.jobId, probePort: port });
  const role = await masterRole(job, master, input.masterAddresses, facts, context.family);
  const target = {
    address: input.masterAddresses.find(
      (address) => familyOf(address) === context.family,
    ) as string,
    port,
  };
  const deadline = deadlineIn(options.verifyTimeout);
  const logger = await createLogger(options.logLevel, options.logFormat);

  let service: ProbeService | null = null;
  let registry: Registry<'publish'> | null = null;
  if (role.role === 'store host') {
    const candidate = new Registry({
      round: 'publish',
      token,
      expected: job.nnodes.max,
      nodeList: job.clusterPeers,
      restrict: options.peers === null ? null : await resolvePeers(options.peers, context.family),
    });
    const wildcard = context.family === 'ipv6' ? '::' : '0.0.0.0';
    try {
      service = await startProbeService({
        host: wildcard,
        port,
        token,
        maxConnections: SERVICE_CONNECTIONS.registry,
        registry: candidate,
      });
      registry = candidate;
    } catch (error) {
      const failure = classifySocketError(error);
      if (!(failure.error === 'port in use' && role.clientIfTaken !== null)) {
        throw new UnreachableError(
          `agree: the probe service cannot bind ${endpointText({ address: wildcard, port })}: ${failure.error} (${failure.detail})`,
        );
      }
    }
  }
  try {
    const node = {
      name: job.nodeName ?? facts.hostname,
      rank: job.nodeRank?.value ?? null,
    };
    const joined = await joinRegistry({
      target,
      masterName: master.host,
      request: { kind: 'publish', token, node, networks: published(facts, context, token, node) },
      token,
      deadline,
      logger,
      attemptMs: ATTEMPT_MS,
      nodes: job.nnodes.max,
    });
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
    await service?.close();
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
