/**
 * `--verify peers` (SPEC "Verification"), a miniature of the job's own
 * connections: this node listens on its chosen address at an ephemeral
 * port (port 0, as NCCL's bootstrap and socket transport bind), registers
 * it with the master's probe service, reached as torch's store will be,
 * and once every node has registered meshes with the nodes of its roster.
 * The master node runs that service, at the probe port on every address as
 * torch's store binds its port; every other node answers at the probe port
 * on its chosen address, so that a peer that cannot reach its ephemeral
 * port can tell a firewall from a dead path. Every service closes when the
 * check ends; the master's once every node has had its roster.
 */
import type { Family, HostFacts } from '../host/host-facts.js';
import { familyOf } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import type { Decision } from '../resolve/decision.js';
import { type Deadline, untilDeadline } from './clock.js';
import { InboundLog } from './inbound-log.js';
import { joinRegistry } from './join-registry.js';
import { BANDWIDTH_WINDOW_MS } from './measure-bandwidth.js';
import { FULL_MESH_MAX_NODES } from './mesh-partners.js';
import { resolvePeers } from './peer-list.js';
import { localPortRange } from './port-range.js';
import { probeMesh } from './probe-mesh.js';
import type { Member } from './probe-protocol.js';
import { type ProbeService, startProbeService } from './probe-service.js';
import { classifySocketError, type ReachFailure } from './reach-error.js';
import { checkRegistryBound, Registry } from './registry.js';

/**
 * Connections each service holds at once, within the default soft limit of
 * 1,024 descriptors with DIAL_CONCURRENCY's 64 dials and Node's own dozen or
 * so: the master's registry (whose connections last one request each) most,
 * since thousands of nodes ask it; a node's ephemeral port is dialled by its
 * partners, at most 255, 64 at a time each.
 */
export const SERVICE_CONNECTIONS = { registry: 640, ephemeral: 192, probePort: 32 } as const;

export interface ProbePeersInput {
  job: JobShape;
  facts: HostFacts;
  decision: Decision;
  /** Every address the master's name resolves to, in getaddrinfo's order. */
  masterAddresses: readonly string[];
  /** The rendezvous' family, which may not be the decision's (verify.ts masterFamily). */
  storeFamily: Family;
  /** Whether this node hosts torch's store (master-role.ts), and so the registry. */
  hostsStore: boolean;
  /** c10d's guessed role: a taken probe port makes this node a client instead. */
  clientIfTaken: boolean;
  port: number;
  token: string;
  nodeName: string;
  /** --peers; empty: every node that registers. */
  restrict: readonly string[];
  minBandwidthMbps: number | null;
  bandwidthWindowMs?: number;
  deadline: Deadline;
  logger: Logger;
  attemptMs: number;
}

export type ProbePeersOutcome =
  /** A service could not start on this node. */
  | { kind: 'listen'; address: string; port: number; failure: ReachFailure }
  /** The registry never answered with a roster; `missing` names who had not come. */
  | {
      kind: 'register';
      failure: ReachFailure;
      target: { address: string; port: number };
      missing: string[];
      registered: number | null;
      expected: number | null;
    }
  | {
      kind: 'mesh';
      partners: Awaited<ReturnType<typeof probeMesh>>['partners'];
      warnings: string[];
    };

export async function probePeers(input: ProbePeersInput): Promise<ProbePeersOutcome> {
  const { decision, deadline } = input;
  checkRegistryBound(input.job);
  const inbound = new InboundLog();
  const services: ProbeService[] = [];
  let companion: Promise<ProbeService | null> = Promise.resolve(null);
  const portRange = await localPortRange();
  const windowMs = input.bandwidthWindowMs ?? BANDWIDTH_WINDOW_MS;
  try {
    let ephemeral: ProbeService;
    try {
      ephemeral = await startProbeService({
        host: decision.address,
        port: 0,
        token: input.token,
        maxConnections: SERVICE_CONNECTIONS.ephemeral,
        onHello: (hello, seen) =>
          inbound.hello('ephemeral', hello.peer, { seen, claimed: hello.address }),
        streams: {
          windowMs,
          onReceived: (stream, seen, bytes, ms) => inbound.stream(stream.peer, { seen, bytes, ms }),
        },
      });
    } catch (error) {
      return {
        kind: 'listen',
        address: decision.address,
        port: 0,
        failure: classifySocketError(error),
      };
    }
    services.push(ephemeral);
    const onProbePort = (hello: { peer: string; address: string }, seen: string) =>
      inbound.hello('probe port', hello.peer, { seen, claimed: hello.address });

    let registry: Registry<'register'> | null = null;
    if (input.hostsStore) {
      const candidate = new Registry({
        round: 'register',
        token: input.token,
        expected: input.job.nnodes.max,
        nodeList: input.job.clusterPeers,
        restrict:
          input.restrict.length > 0 ? await resolvePeers(input.restrict, decision.family) : null,
      });
      const wildcard = input.storeFamily === 'ipv6' ? '::' : '0.0.0.0';
      try {
        services.push(
          await startProbeService({
            host: wildcard,
            port: input.port,
            token: input.token,
            maxConnections: SERVICE_CONNECTIONS.registry,
            registry: candidate,
            onHello: onProbePort,
          }),
        );
        registry = candidate;
      } catch (error) {
        const failure = classifySocketError(error);
        // torch would become a client of whoever holds the port (master-role.ts clientIfTaken).
        if (!(failure.error === 'port in use' && input.clientIfTaken)) {
          return { kind: 'listen', address: wildcard, port: input.port, failure };
        }
      }
    }
    // Only a help for the diagnosis, started once the master's service is
    // known to be bound: a node of this job on the master's own host must
    // not take the probe port there first. Another job's probe or such a
    // node may hold it, and the check goes on without it.
    const startCompanion = () => {
      if (input.hostsStore) return;
      companion = startProbeService({
        host: decision.address,
        port: input.port,
        token: input.token,
        maxConnections: SERVICE_CONNECTIONS.probePort,
        onHello: onProbePort,
      }).catch(() => null);
    };

    const target = {
      address: storeAddress(input.masterAddresses, input.storeFamily),
      port: input.port,
    };
    const iface = input.facts.interfaces.find((candidate) => candidate.name === decision.interface);
    const joined = await joinRegistry({
      target,
      masterName: input.job.master?.host ?? target.address,
      request: {
        kind: 'register',
        token: input.token,
        node: { name: input.nodeName, rank: input.job.nodeRank?.value ?? null },
        interface: decision.interface,
        address: decision.address,
        port: ephemeral.port,
        speedMbps: iface?.speedMbps ?? null,
        portRange,
      },
      token: input.token,
      deadline,
      logger: input.logger,
      attemptMs: input.attemptMs,
      nodes: input.job.nnodes.max,
      onReached: startCompanion,
    });
    if (!joined.ok || joined.kind !== 'roster') {
      const waiting = joined.ok ? null : joined.waiting;
      return {
        kind: 'register',
        failure: joined.ok
          ? { error: 'no handshake', detail: 'the registry sent a table' }
          : joined,
        target,
        missing: waiting?.missing ?? [],
        registered: waiting?.registered ?? null,
        expected: waiting?.expected ?? null,
      };
    }
    const self = joined.members.find(
      (member) => member.address === decision.address && member.port === ephemeral.port,
    );
    if (self === undefined) {
      input.logger.warn(
        `this node (${input.nodeName}) is not among the --peers the master restricts the check to (${input.restrict.join(', ') || 'its own list'}): nothing was checked from here`,
      );
      return { kind: 'mesh', partners: [], warnings: [] };
    }
    logShape(input, joined.roster.nodes, joined.roster.sampled, joined.members.length - 1);
    const meshed = await probeMesh({
      self,
      members: joined.members as Member[],
      localAddress: decision.address,
      interfaceName: decision.interface,
      probePort: input.port,
      token: input.token,
      deadline,
      logger: input.logger,
      inbound,
      attemptMs: input.attemptMs,
      bandwidth: { windowMs, minMbps: input.minBandwidthMbps },
    });
    // The master's service stays until every node has its roster (a sampled
    // roster's partners may be done long before the last node asks).
    if (registry !== null) await untilDeadline(registry.allDelivered, deadline);
    return { kind: 'mesh', partners: meshed.partners, warnings: meshed.warnings };
  } finally {
    const late = await companion;
    await Promise.all([...services, ...(late ? [late] : [])].map((service) => service.close()));
  }
}

/** The store's address as torch's clients dial it: the first of the family getaddrinfo gives. */
function storeAddress(addresses: readonly string[], family: Family): string {
  const found = addresses.find((address) => familyOf(address) === family);
  if (found === undefined) throw new Error(`the master has no ${family} address`);
  return found;
}

/** SPEC: "above a size it dials ring neighbours plus a sample, and says so". */
function logShape(input: ProbePeersInput, nodes: number, sampled: boolean, partners: number): void {
  if (sampled) {
    input.logger.info(
      `mesh of ${nodes} nodes: above ${FULL_MESH_MAX_NODES} nodes each dials its ring neighbours plus a sample, ${partners} partners for this node`,
    );
  } else {
    input.logger.debug(`mesh of ${nodes} nodes: this node dials all ${partners} others`);
  }
}
