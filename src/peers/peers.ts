/**
 * `--verify peers` (SPEC "Verification"), a miniature of the job's own
 * connections: this node listens on its chosen address at an ephemeral
 * port (port 0, as NCCL's bootstrap and socket transport bind), registers
 * it with the master's probe service, reached as torch's store will be,
 * and once the rendezvous is complete meshes with the nodes of its roster.
 * The store host runs that service, the registry, at the meeting point
 * (meeting-point.ts: the rendezvous port, on every address as torch's store
 * binds it), and registers itself in-process. Every service closes when
 * the check ends; the master's once every member has had its roster, and
 * the other nodes end theirs only once it has (registry-closes.ts).
 */
import type { HostFacts } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import { Admission } from '../membership/admission.js';
import { newProofKey } from '../membership/claim-proof.js';
import { slurmCredential } from '../membership/munge.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import {
  MAX_DATA_DEVICES,
  MAX_MESSAGE_BYTES,
  type Member,
  type Register,
} from '../probe/protocol.js';
import { type ProbeService, startProbeService } from '../probe/service.js';
import { type Deadline, untilDeadline } from '../reach/clock.js';
import { endpointText } from '../reach/endpoint.js';
import { classifySocketError, type ReachFailure } from '../reach/reach-error.js';
import type { Completion } from '../registry/final-answers.js';
import { FULL_MESH_MAX_NODES } from '../registry/partners.js';
import type { Decision } from '../resolve/decision.js';
import { BANDWIDTH_WINDOW_MS, SAMPLE_WINDOW_MS } from './bandwidth.js';
import { fitDevices, listenOnDevices } from './data-devices.js';
import { InboundLog } from './inbound-log.js';
import { type MeetingPoint, membershipLine } from './meeting-point.js';
import { partnerPassed, probeMesh } from './mesh.js';
import { localPortRange } from './port-range.js';
import { untilRegistryCloses } from './registry-closes.js';
import { joinRound } from './round.js';

/** Connections at a node's ephemeral port that have not said hello yet; more push the oldest out. */
const EPHEMERAL_PENDING = 64;

export interface ProbePeersInput {
  job: JobShape;
  facts: HostFacts;
  decision: Decision;
  /**
   * NCCL's data-plane socket devices besides the decision's own, in its
   * index order (plan nccl.devices): several where a kept
   * NCCL_SOCKET_IFNAME matches several interfaces; none otherwise.
   */
  devices: readonly NcclBind[];
  meeting: MeetingPoint;
  nodeName: string;
  /** --peers; empty: every node that registers. */
  restrict: readonly string[];
  minBandwidthMbps: number | null;
  bandwidthWindowMs?: number;
  deadline: Deadline;
  logger: Logger;
  attemptMs: number;
}

/** How the rendezvous went, for the log and check --json: who came, of how many, and how it completed. */
export interface RendezvousOutcome {
  /** null where this node came late and only torch's store answered. */
  nodes: number | null;
  expected: number;
  /** This node came after completion, or registered again: it is no member. */
  late: boolean;
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
      rendezvous: RendezvousOutcome | null;
    };

export async function probePeers(input: ProbePeersInput): Promise<ProbePeersOutcome> {
  const { decision, deadline, meeting, job } = input;
  const inbound = new InboundLog();
  /** What the check opened, closed when it ends. */
  const opened: { close(): Promise<void> }[] = [];
  const portRange = await localPortRange();
  // SPEC: about a second with --min-bandwidth; without it a short sample that can only warn.
  const windowMs =
    input.bandwidthWindowMs ??
    (input.minBandwidthMbps === null ? SAMPLE_WINDOW_MS : BANDWIDTH_WINDOW_MS);
  // Held in this process alone: the registry's dial-back proves our claim with it (membership/claim-proof.ts).
  const proofKey = newProofKey();
  try {
    let ephemeral: ProbeService;
    try {
      ephemeral = await startProbeService({
        host: decision.address,
        port: 0,
        token: meeting.token,
        maxPending: EPHEMERAL_PENDING,
        proofKey,
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
    opened.push(ephemeral);
    const devices = await listenOnDevices(input.devices, meeting.token, inbound);
    opened.push(devices);
    if (devices.failed !== null) {
      const { device, failure } = devices.failed;
      return {
        kind: 'listen',
        address: device.address,
        port: 0,
        failure: {
          ...failure,
          detail: `${failure.detail}: NCCL's data-plane device ${device.interface} (NCCL_SOCKET_IFNAME matches it too) cannot listen on ${device.address}`,
        },
      };
    }

    const iface = input.facts.interfaces.find((candidate) => candidate.name === decision.interface);
    const claim: Omit<Register, 'v' | 'munge'> = {
      kind: 'register',
      token: meeting.token,
      node: { name: input.nodeName, rank: job.nodeRank?.value ?? null },
      interface: decision.interface,
      address: decision.address,
      port: ephemeral.port,
      speedMbps: iface?.speedMbps ?? null,
      portRange,
      mtu: iface?.mtu ?? null,
      ...(devices.listening.length > 0 && {
        devices: devices.listening
          .slice(0, MAX_DATA_DEVICES)
          .map((d): [string, string, number] => [d.interface, d.address, d.port]),
      }),
      proofKey,
    };
    const unchecked = fitDevices(claim);
    if (unchecked.length > 0) {
      input.logger.warn(
        `NCCL's data-plane devices ${unchecked.join(', ')} are left out of the mesh: with them this node's registration would exceed the probe's ${MAX_MESSAGE_BYTES} bytes`,
      );
    }
    const munge = await slurmCredential(meeting.munge, claim, deadline.remainingMs() / 1_000);
    const membership = membershipLine(meeting, munge);
    input.logger[membership.level](membership.line);
    const request: Omit<Register, 'v'> = { ...claim, munge: munge?.credential ?? null };
    const met = await joinRound('register', {
      meeting,
      job,
      request,
      seen: decision.address,
      restrict: input.restrict,
      deadline,
      logger: input.logger,
      attemptMs: input.attemptMs,
      onHello: (hello, seen) =>
        inbound.hello('probe port', hello.peer, { seen, claimed: hello.address }),
      admission: new Admission({
        token: meeting.token,
        localAddress: decision.address,
        // MUNGE where this node's own munged made a credential (membership/munge.ts).
        munge:
          munge?.credential == null ? null : { socket: munge.socket, uid: process.getuid?.() ?? 0 },
        onProven: (claimed, seen) =>
          input.logger.debug(
            `${claimed.node.name} registered from ${seen}, not its claimed ${claimed.address}: its probe service there proved the claim (the master's name resolves to another network, or a NAT lies between)`,
          ),
        onRefused: (reason) =>
          input.logger.warn(`the probe registry refused a registration: ${reason}`),
        onUnproven: (line) => input.logger.warn(line),
      }),
    });
    if (met.kind === 'failed') {
      return {
        kind: 'listen',
        address: meeting.wildcard,
        port: meeting.port,
        failure: met.failure,
      };
    }
    opened.push(met);
    const { joined, registry } = met;
    if (!joined.ok && joined.foreign) {
      const late = `${endpointText(meeting.target)} takes connections but does not answer as the probe: the elastic rendezvous has completed and the job's torch store runs there; this node (${input.nodeName}) joins as torch does, on the wait list for the next round, and nothing was checked from here`;
      input.logger.warn(late);
      return {
        kind: 'mesh',
        partners: [],
        warnings: [],
        rendezvous: { nodes: null, expected: job.nnodes.max, late: true },
      };
    }
    if (!joined.ok || joined.kind !== 'roster') {
      const waiting = joined.ok ? null : joined.waiting;
      return {
        kind: 'register',
        failure: joined.ok
          ? { error: 'no handshake', detail: 'the registry sent a table' }
          : joined,
        target: meeting.target,
        missing: waiting?.missing ?? [],
        registered: waiting?.registered ?? null,
        expected: waiting?.expected ?? null,
      };
    }
    const { roster } = joined;
    const rendezvous = { nodes: roster.nodes, expected: roster.expected, late: roster.late };
    // Where this node's launcher starts next, not while the master's registry is at its port.
    const handOver = () =>
      untilRegistryCloses({
        meeting,
        localAddress: decision.address,
        selfName: input.nodeName,
        nodes: roster.nodes,
        deadline,
        logger: input.logger,
      });
    if (roster.late) {
      input.logger.warn(
        `the rendezvous had completed with ${roster.nodes} of ${roster.expected} nodes before this node (${input.nodeName}) registered: it is not part of this check, and torch puts it on the wait list for the next round`,
      );
      if (registry === null) await handOver();
      return { kind: 'mesh', partners: [], warnings: [], rendezvous };
    }
    const self = joined.members.find(
      (member) => member.address === decision.address && member.port === ephemeral.port,
    );
    if (self === undefined) {
      input.logger.warn(
        `this node (${input.nodeName}) is not among the --peers the master restricts the check to (${input.restrict.join(', ') || 'its own list'}): nothing was checked from here`,
      );
      if (registry === null) await handOver();
      return { kind: 'mesh', partners: [], warnings: [], rendezvous };
    }
    const warnings: string[] = [];
    if (roster.nodes < roster.expected) {
      warnings.push(belowMax(roster.nodes, roster.expected, registry?.outcome?.completion ?? null));
    }
    logShape(input, roster.nodes, roster.sampled, joined.members.length - 1);
    const meshed = await probeMesh({
      self,
      devices: devices.listening.slice(0, claim.devices?.length ?? 0),
      members: joined.members as Member[],
      localAddress: decision.address,
      interfaceName: decision.interface,
      probePort: meeting.port,
      token: meeting.token,
      deadline,
      logger: input.logger,
      inbound,
      attemptMs: input.attemptMs,
      bandwidth: { windowMs, minMbps: input.minBandwidthMbps },
    });
    // The master's service stays until every member has its roster (a sampled
    // roster's partners may be done long before the last node has it), and
    // the other nodes hand the port to torch's store only once it has closed.
    if (registry !== null) await untilDeadline(registry.allDelivered, deadline);
    else if (meshed.partners.every(partnerPassed)) {
      await handOver();
    }
    return {
      kind: 'mesh',
      partners: meshed.partners,
      warnings: [...warnings, ...meshed.warnings],
      rendezvous,
    };
  } finally {
    await Promise.all(opened.map((service) => service.close()));
  }
}

/** SPEC "Real jobs": the log says that the job starts below MAX. */
function belowMax(nodes: number, expected: number, completion: Completion | null): string {
  const how = completion === 'last call' || completion === null ? ' after the last call' : '';
  return `the elastic rendezvous completed with ${nodes} of at most ${expected} nodes${how}: the job starts below MAX, with ${nodes} nodes`;
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
