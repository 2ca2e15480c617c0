/**
 * SPEC "Verification": how far the pre-flight goes before torchrun starts,
 * so that a job that would hang inside NCCL or Gloo fails in seconds with
 * the cause named. Levels nest: local ⊂ master; peers = local + the master
 * node's port check + the probe among all nodes (instead of the connect to
 * the rendezvous port, so it needs no torchrun running).
 */
import { ConfigError } from '../errors.js';
import type { HostFacts, InterfaceFacts, RouteAnswer } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import type { Decision } from '../resolve/decision.js';
import { checkLocal } from './check-local.js';
import { checkStorePort } from './check-store-port.js';
import { type Deadline, deadlineIn } from './clock.js';
import { failureOf } from './failure.js';
import { masterRole } from './master-role.js';
import { type PeerPlan, planPeers, resolvePeers } from './peer-list.js';
import { probePeers } from './probe-peers.js';
import { jobToken } from './probe-token.js';
import { ATTEMPT_MS, waitForEndpoint } from './wait-for-endpoint.js';

export { VerificationFailedError } from './failure.js';

export interface VerifyInput {
  level: 'none' | 'local' | 'master' | 'peers';
  decision: Decision;
  job: JobShape;
  facts: HostFacts;
  timeoutMs: number;
  /** Hosts for --verify peers (already expanded). */
  peers: string[];
  probePort: number | null;
  logger: Logger;
  /** The kernel's routes to the master's addresses of the chosen family (ResolveContext.routesToMaster). */
  routesToMaster: RouteAnswer[];
  /** Every address the master resolves to (plan.ts resolves it once, for the choice and for this). */
  masterAddresses: readonly string[];
  /** What tells this job from another on the same nodes: SLURM_JOB_ID, torchrun's --rdzv-id. */
  jobId?: string | null;
}

export interface PeerResult {
  peer: string;
  address: string | null;
  port: number;
  ok: boolean;
  /** refused, unreachable, timed out, wrong source address, ... (ReachError) */
  error: string | null;
  /** The source address the other side saw, for peers. */
  seenSource: string | null;
  elapsedMs: number;
  /**
   * bind: the master node's rendezvous port; connect: a worker to the master;
   * listen: this node's probe listener; probe: the peer probe, both ways.
   */
  check: 'bind' | 'connect' | 'listen' | 'probe';
  /** The errno or what was seen behind `error`, e.g. ECONNREFUSED, "no answer in 5s". */
  detail: string | null;
  /** Probe only: the peer → this node leg; `ok` above covers both legs. */
  inbound: {
    ok: boolean;
    error: string | null;
    detail: string | null;
    source: string | null;
  } | null;
}

export interface VerifyReport {
  level: VerifyInput['level'];
  ok: boolean;
  warnings: string[];
  results: PeerResult[];
  /** The interface and address every check ran over. */
  interface: string;
  localAddress: string;
  elapsedMs: number;
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
    interface: decision.interface,
    localAddress: decision.address,
    elapsedMs: 0,
  };
  if (input.level === 'none') return report;

  const local = checkLocal(input.facts, decision, input.routesToMaster);
  report.warnings.push(...local.warnings);
  if (!local.ok) throw failureOf(finish(report, deadline, false), local.message);
  if (input.level === 'local') return finish(report, deadline, true);

  // A bad peer list is a configuration error: find it before touching the network.
  const peers = input.level === 'peers' ? await planProbe(input, local.iface) : null;
  report.results.push(...(await checkMaster(input, deadline, report.warnings)));
  if (peers) report.results.push(...(await probeAll(input, peers, deadline)));

  const ok = report.results.every((result) => result.ok);
  finish(report, deadline, ok);
  if (!ok) throw failureOf(report);
  return report;
}

/**
 * The store host (by torch's rule, master-role.ts) binds the rendezvous
 * port; at level master, every other node connects to it, as does a store
 * host whose port is taken where torch would then join as a client.
 */
async function checkMaster(
  input: VerifyInput,
  deadline: Deadline,
  warnings: string[],
): Promise<PeerResult[]> {
  const { decision, job } = input;
  const master = job.master;
  if (master === null) return [];
  const role = await masterRole(job, master, input.masterAddresses, input.facts, decision.family);
  let clientOf = role.role === 'worker' ? role.address : null;
  if (role.role === 'store host') {
    if (role.warning) warnings.push(role.warning);
    const bound = await checkStorePort(role.address, master.port, decision.family);
    // Where torch only guessed the role, a taken port makes it a client of
    // whoever holds it (master-role.ts); it is checked as one below.
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
  if (input.level !== 'master' || clientOf === null) return [];
  const waited = await waitForEndpoint({
    target: { address: clientOf, port: master.port },
    localAddress: decision.address,
    interfaceName: decision.interface,
    deadline,
    logger: input.logger,
  });
  return [
    {
      ...blankResult(master.host, clientOf, master.port, 'connect'),
      ok: waited.outcome.ok,
      ...(!waited.outcome.ok && { error: waited.outcome.error, detail: waited.outcome.detail }),
      elapsedMs: Math.round(waited.elapsedMs),
    },
  ];
}

interface ProbePlan {
  plan: PeerPlan;
  port: number;
}

async function planProbe(input: VerifyInput, chosen: InterfaceFacts): Promise<ProbePlan> {
  const { job } = input;
  if (input.peers.length === 0) {
    throw new ConfigError(
      '--verify peers needs the list of nodes: give --peers, or run it under Slurm',
    );
  }
  // SPEC --probe-port: "master port + 1", beside the rendezvous port.
  const port = input.probePort ?? (job.master ? job.master.port + 1 : null);
  if (port === null) {
    throw new ConfigError(
      '--verify peers needs --probe-port: there is no master port to derive it from',
    );
  }
  if (port > 65535) {
    throw new ConfigError(
      `the probe port derived from the master port, ${port}, is outside 1-65535: give --probe-port`,
    );
  }
  const resolved = await resolvePeers(input.peers, input.decision.family);
  return { plan: planPeers(resolved, input.facts, chosen), port };
}

async function probeAll(
  input: VerifyInput,
  { plan, port }: ProbePlan,
  deadline: Deadline,
): Promise<PeerResult[]> {
  const { decision, job } = input;
  const probed = await probePeers({
    plan,
    localAddress: decision.address,
    interfaceName: decision.interface,
    port,
    token: jobToken({
      master: job.master,
      jobId: input.jobId ?? null,
      peers: input.peers,
      probePort: port,
    }),
    deadline,
    logger: input.logger,
    attemptMs: ATTEMPT_MS,
  });
  if (probed.listen) {
    return [
      {
        ...blankResult(plan.self, decision.address, port, 'listen'),
        error: probed.listen.error,
        detail: probed.listen.detail,
        elapsedMs: Math.round(deadline.elapsedMs()),
      },
    ];
  }
  return probed.peers.map((peer) => ({
    peer: peer.name,
    address: peer.address,
    port,
    ok: peer.outbound.ok && peer.inbound.ok,
    error: peer.outbound.error,
    seenSource: peer.outbound.seen,
    elapsedMs: Math.round(peer.outbound.elapsedMs),
    check: 'probe',
    detail: peer.outbound.detail,
    inbound: peer.inbound,
  }));
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
