/**
 * SPEC "Verification": how far the pre-flight goes before torchrun starts,
 * so that a job that would hang inside NCCL or Gloo fails in seconds with
 * the cause named. Levels nest: local ⊂ master; peers = local + the master
 * node's port check + the probe among all nodes (instead of the connect to
 * the rendezvous port, so it needs no torchrun running).
 */
import { ConfigError } from '../errors.js';
import type { HostFacts, RouteAnswer } from '../host/host-facts.js';
import type { JobShape } from '../job/job-shape.js';
import type { Logger } from '../log.js';
import type { Decision } from '../resolve/decision.js';
import { checkLocal } from './check-local.js';
import { checkStorePort } from './check-store-port.js';
import { deadlineIn } from './clock.js';
import { failureOf } from './failure.js';
import { masterRole } from './master-role.js';
import { planPeers, resolvePeers } from './peer-list.js';
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
  /** Every address the master resolves to; looked up again (dns.lookup) when absent. */
  masterAddresses?: readonly string[];
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
  const { decision, job, logger } = input;
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

  const master = job.master;
  const role =
    master && (await masterRole(job, master, input.masterAddresses, input.facts, decision.family));
  if (master && role?.role === 'store host') {
    if (role.warning) report.warnings.push(role.warning);
    const bound = await checkStorePort(role.address, master.port, decision.family);
    report.results.push({
      ...blankResult(master.host, role.address, master.port, 'bind'),
      ok: bound.ok,
      ...(!bound.ok && { address: bound.address, error: bound.error, detail: bound.detail }),
      elapsedMs: Math.round(deadline.elapsedMs()),
    });
  }
  if (master && role?.role === 'worker' && input.level === 'master') {
    const target = { address: role.address, port: master.port };
    const waited = await waitForEndpoint({
      target,
      localAddress: decision.address,
      interfaceName: decision.interface,
      deadline,
      logger,
    });
    report.results.push({
      ...blankResult(master.host, role.address, master.port, 'connect'),
      ok: waited.outcome.ok,
      ...(!waited.outcome.ok && { error: waited.outcome.error, detail: waited.outcome.detail }),
      elapsedMs: Math.round(waited.elapsedMs),
    });
  }
  if (input.level === 'peers') report.results.push(...(await probeAll(input, deadline)));

  const ok = report.results.every((result) => result.ok);
  finish(report, deadline, ok);
  if (!ok) throw failureOf(report);
  return report;
}

async function probeAll(
  input: VerifyInput,
  deadline: ReturnType<typeof deadlineIn>,
): Promise<PeerResult[]> {
  const { decision, job } = input;
  const names = input.peers;
  if (names.length === 0) {
    throw new ConfigError(
      '--verify peers needs the list of nodes: give --peers, or run it under Slurm',
    );
  }
  // SPEC --probe-port: "master port + 1", beside the rendezvous port that every node may already open.
  const port = input.probePort ?? (job.master ? job.master.port + 1 : null);
  if (port === null || port > 65535) {
    throw new ConfigError(
      `--verify peers needs --probe-port: no master port to derive it from (${port ?? 'none'})`,
    );
  }
  const chosen = input.facts.interfaces.find((iface) => iface.name === decision.interface);
  if (chosen === undefined)
    throw new ConfigError(`the chosen interface ${decision.interface} is not in the host facts`);
  const plan = planPeers(await resolvePeers(names, decision.family), input.facts, chosen);
  const probed = await probePeers({
    plan,
    localAddress: decision.address,
    interfaceName: decision.interface,
    port,
    token: jobToken({
      master: job.master,
      jobId: input.jobId ?? null,
      peers: names,
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
