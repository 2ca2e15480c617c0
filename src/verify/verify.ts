/**
 * SPEC "Verification": how far the pre-flight goes before torchrun starts,
 * so that a job that would hang inside NCCL or Gloo fails in seconds with
 * the cause named. Levels nest: local ⊂ master; peers = local + the master
 * node's port check + the probe among all nodes (instead of the connect to
 * the rendezvous port, so it needs no torchrun running).
 */

import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import { prefixContains, sameAddress } from '../host/ip-address.js';
import type { JobShape } from '../job/job-shape.js';
import type { StoreRole } from '../job/store-role.js';
import type { Logger } from '../log.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import type { VerifyLevel } from '../options/verify-level.js';
import { reaches } from '../options/verify-level.js';
import type { MeetingPoint } from '../peers/meeting-point.js';
import { partnerPassed } from '../peers/mesh.js';
import { type ProbePeersOutcome, probePeers } from '../peers/peers.js';
import { ATTEMPT_MS } from '../reach/backoff.js';
import { type Deadline, deadlineIn, formatSeconds } from '../reach/clock.js';
import { endpointText } from '../reach/endpoint.js';
import type { Decision } from '../resolve/decision.js';
import { checkLocal } from './check-local.js';
import { checkStorePort } from './check-store-port.js';
import { failureOf } from './failure.js';
import type { PeerResult, VerifyReport } from './report.js';
import { type WaitOutcome, waitForEndpoint, waitForStore } from './wait-for-endpoint.js';

export { VerificationFailedError } from './failure.js';

export interface VerifyInput {
  level: VerifyLevel;
  decision: Decision;
  /** NCCL's further data-plane socket devices, dialled by --verify peers (peers/data-devices.ts). */
  devices?: readonly NcclBind[];
  job: JobShape;
  facts: HostFacts;
  timeoutMs: number;
  /** --peers (already expanded): restricts --verify peers to these hosts; empty: every node that registers. */
  peers: string[];
  /** This node's part in torch's store, as the plan decided it (store-role.ts); null without a master. */
  role: StoreRole | null;
  /** Where the nodes meet at --verify peers, as the plan computed it (peers/meeting-point.ts); null: no probe. */
  meeting: MeetingPoint | null;
  logger: Logger;
  /** The kernel's routes to the master's addresses of the chosen family (ResolveContext.routesToMaster). */
  routesToMaster: RouteAnswer[];
  /** Every address the master resolves to (plan/plan.ts resolves it once, for the choice and for this). */
  masterAddresses: readonly string[];
  /**
   * The family the rendezvous uses (ResolveContext.family). Not always the
   * decision's: a single-node IPv6 job runs NCCL on lo's 127.0.0.1, since
   * NCCL skips ::1, while its store is still at [::1].
   */
  masterFamily?: Decision['family'];
  /** This node's name in the mesh: Slurm's SLURMD_NODENAME, else the hostname. */
  nodeName?: string;
  /** --min-bandwidth in Mbit/s: the throughput to the next node must reach it. */
  minBandwidthMbps?: number | null;
  /** How long the throughput is measured (BANDWIDTH_WINDOW_MS); tests shorten it. */
  bandwidthWindowMs?: number;
}

/**
 * Returns the report (warnings included, for the caller to log); throws
 * VerificationFailedError, an UnreachableError (exit 75) carrying the same
 * report, when a check fails.
 */
export async function verify(input: VerifyInput): Promise<VerifyReport> {
  const { decision } = input;
  const deadline = deadlineIn(input.timeoutMs);
  const report: VerifyReport = {
    level: input.level,
    ok: true,
    warnings: [],
    results: [],
    rendezvous: null,
    interface: decision.interface,
    localAddress: decision.address,
    elapsedMs: 0,
  };
  if (!reaches(input.level, 'local')) return report;

  const local = checkLocal(input.facts, decision, input.routesToMaster);
  report.warnings.push(...local.warnings);
  if (!local.ok) throw failureOf(finish(report, deadline, false), local.message);
  if (!reaches(input.level, 'master')) return finish(report, deadline, true);

  const { role } = input;
  report.results.push(...(await checkMaster(input, role, deadline, report.warnings)));
  // The registry meets at the rendezvous port: where torch's store cannot bind it, neither can it.
  const bound = report.results.every((result) => result.check !== 'bind' || result.ok);
  if (reaches(input.level, 'peers') && input.meeting !== null && role !== null && bound) {
    report.results.push(...(await probeAll(input, input.meeting, deadline, report)));
  }

  const ok = report.results.every((result) => result.ok);
  finish(report, deadline, ok);
  if (!ok) throw failureOf(report);
  return report;
}

/**
 * The store host (by torch's rule, store-role.ts) binds the rendezvous
 * port; at level master, every other node connects to it, as does a store
 * host whose port is taken where torch would then join as a client.
 */
async function checkMaster(
  input: VerifyInput,
  role: StoreRole | null,
  deadline: Deadline,
  warnings: string[],
): Promise<PeerResult[]> {
  const { decision, job } = input;
  const master = job.master;
  if (master === null || role === null) return [];
  let clientOf = role.role === 'worker' ? role.address : null;
  if (role.role === 'store host') {
    if (role.warning) warnings.push(role.warning);
    const bound = await checkStorePort(
      role.address,
      master.port,
      input.masterFamily ?? decision.family,
    );
    // Where torch only guessed the role, a taken port makes it a client of
    // whoever holds it (store-role.ts); it is checked as one below.
    clientOf = !bound.ok && bound.error === 'port in use' ? role.clientIfTaken : null;
    if (clientOf === null) {
      return [
        {
          ...blankResult(master.host, role.address, master.port, 'bind'),
          ok: bound.ok,
          ...(!bound.ok && { address: bound.address, error: bound.error, detail: bound.detail }),
          elapsedMs: Math.round(deadline.elapsedMs()),
        },
      ];
    }
  }
  // At peers the probe proves the path instead: no torchrun runs yet, so no store answers.
  if (reaches(input.level, 'peers') || clientOf === null) return [];
  // SPEC level master, two checks, a failure saying which: (a) the store as
  // torch's TCPStore reaches it, the master's name resolved as torch resolves
  // it and no source imposed (under strict reverse-path filtering a source
  // imposed on another network is dropped, though the store would connect);
  // (b) when one of the master's addresses is on the chosen network, that
  // address from the chosen one, the path NCCL's bootstrap takes.
  const wait = (address: string, localAddress: string | null) =>
    waitForEndpoint({
      target: { address, port: master.port },
      localAddress,
      interfaceName: decision.interface,
      deadline,
      logger: input.logger,
    });
  const result = (address: string, check: PeerResult['check'], waited: WaitOutcome) => ({
    ...blankResult(master.host, address, master.port, check),
    ok: waited.outcome.ok,
    ...(!waited.outcome.ok && { error: waited.outcome.error, detail: waited.outcome.detail }),
    elapsedMs: Math.round(waited.elapsedMs),
  });
  // torch's TCPStore client dials each of the name's addresses in turn (waitForStore).
  const reached = await waitForStore({
    addresses: input.masterAddresses.length > 0 ? input.masterAddresses : [clientOf],
    port: master.port,
    interfaceName: decision.interface,
    deadline,
    logger: input.logger,
  });
  const store = result(reached.address, 'connect', reached);
  const onNetwork = masterOnChosenNetwork(input);
  if (!store.ok || onNetwork === null) return [store];
  return [store, result(onNetwork, 'data path', await wait(onNetwork, decision.address))];
}

/** A master address inside the chosen address's prefix, or null. */
function masterOnChosenNetwork({ facts, decision, masterAddresses }: VerifyInput): string | null {
  const held = facts.interfaces
    .find((iface) => iface.name === decision.interface)
    ?.addresses.find((entry) => sameAddress(entry.address, decision.address));
  if (held === undefined) return null;
  return (
    masterAddresses.find((master) => prefixContains(held.address, held.prefixLength, master)) ??
    null
  );
}

async function probeAll(
  input: VerifyInput,
  meeting: MeetingPoint,
  deadline: Deadline,
  report: VerifyReport,
): Promise<PeerResult[]> {
  const { decision, job } = input;
  const outcome = await probePeers({
    job,
    facts: input.facts,
    decision,
    devices: input.devices ?? [],
    meeting,
    nodeName: input.nodeName ?? input.facts.hostname,
    restrict: input.peers,
    minBandwidthMbps: input.minBandwidthMbps ?? null,
    ...(input.bandwidthWindowMs !== undefined && { bandwidthWindowMs: input.bandwidthWindowMs }),
    deadline,
    logger: input.logger,
    attemptMs: ATTEMPT_MS,
  });
  if (outcome.kind === 'mesh') {
    report.warnings.push(...outcome.warnings);
    report.rendezvous = outcome.rendezvous;
  }
  return probeResults(outcome, input, deadline);
}

function probeResults(
  outcome: ProbePeersOutcome,
  input: VerifyInput,
  deadline: Deadline,
): PeerResult[] {
  const elapsedMs = Math.round(deadline.elapsedMs());
  const self = input.nodeName ?? input.facts.hostname;
  switch (outcome.kind) {
    case 'listen':
      return [
        {
          ...blankResult(self, outcome.address, outcome.port, 'listen'),
          error: outcome.failure.error,
          detail: outcome.failure.detail,
          elapsedMs,
        },
      ];
    case 'register': {
      const { target, failure } = outcome;
      const master = input.job.master?.host ?? target.address;
      if (failure.error !== 'not registered') {
        return [
          {
            ...blankResult(master, target.address, target.port, 'register'),
            error: failure.error,
            detail: failure.detail,
            elapsedMs,
          },
        ];
      }
      // SPEC "Outputs": a node that never registered, by its Slurm name, else its rank.
      const counted =
        outcome.registered === null
          ? 'the master was still in the agree round'
          : `${outcome.registered} of ${outcome.expected} nodes registered`;
      const unnamed = (outcome.expected ?? 0) - (outcome.registered ?? 0) - outcome.missing.length;
      const missing = [...outcome.missing, ...(unnamed > 0 ? [`${unnamed} more node(s)`] : [])];
      return missing.map((name) => ({
        ...blankResult(name, null, target.port, 'register'),
        error: 'not registered',
        detail: `did not register with the master's probe service (${master} at ${endpointText(target)}) in ${formatSeconds(deadline.totalMs)}; ${counted}`,
        elapsedMs,
      }));
    }
    case 'mesh':
      return outcome.partners.map((probe) => ({
        peer: probe.member.name,
        address: probe.member.address,
        port: probe.member.port,
        ok: partnerPassed(probe),
        error: probe.outbound.error,
        seenSource: probe.outbound.seen,
        bandwidthMbps: probe.bandwidthMbps,
        elapsedMs: Math.round(probe.outbound.elapsedMs),
        check: 'probe',
        detail: probe.outbound.detail,
        inbound: { ...probe.inbound, bandwidthMbps: probe.inboundBandwidthMbps },
      }));
  }
}

function blankResult(
  peer: string,
  address: string | null,
  port: number,
  check: PeerResult['check'],
): PeerResult {
  return {
    peer,
    address,
    port,
    ok: false,
    error: null,
    seenSource: null,
    bandwidthMbps: null,
    elapsedMs: 0,
    check,
    detail: null,
    inbound: null,
  };
}

function finish(
  report: VerifyReport,
  deadline: ReturnType<typeof deadlineIn>,
  ok: boolean,
): VerifyReport {
  report.ok = ok;
  report.elapsedMs = Math.round(deadline.elapsedMs());
  return report;
}
