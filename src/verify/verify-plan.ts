/**
 * The pre-flight of a plan (SPEC "Verification"): the plan's decision,
 * job and facts, and the options of the check, in one place, so that a new
 * verify option is read here once; its warnings and its one summary line
 * logged. Loads the probe only when a level above none asks for it.
 */

import type { CollectiveReport } from '../collective/report.js';
import { sameAddress } from '../host/ip-address.js';
import { findLauncher } from '../launch/find-launcher.js';
import type { Logger } from '../log.js';
import type { NcclBind } from '../nccl/nccl-pick.js';
import type { Options } from '../options/option-table.js';
import { reaches } from '../options/verify-level.js';
import type { Plan } from '../plan/plan.js';
import { VerificationFailedError } from './failure.js';
import type { VerifyReport } from './report.js';

export async function verifyPlan(
  plan: Plan,
  options: Options,
  logger: Logger,
): Promise<VerifyReport | null> {
  if (plan.verify.capped !== null) logger.info(plan.verify.capped);
  if (!reaches(plan.verify.level, 'local')) return null;
  // The plan's warnings were logged already (cli/job-context.ts), the route warning among them.
  const said = new Set(plan.variables.warnings);
  const unsaid = (warnings: readonly string[]) => warnings.filter((w) => !said.has(w));
  const { verify } = await import('./verify.js');
  const report = await verify({
    level: plan.verify.level,
    decision: plan.decision,
    devices: furtherDevices(plan),
    job: plan.job,
    facts: plan.facts,
    routesToMaster: plan.routesToMaster,
    timeoutMs: options.verifyTimeout,
    // SPEC --peers: it restricts the mesh; Slurm's node list only names who is missing.
    peers: options.peers !== null ? plan.peers : [],
    role: plan.role,
    meeting: plan.meeting,
    logger,
    masterAddresses: plan.master?.addresses ?? [],
    masterFamily: plan.context.family,
    nodeName: plan.job.nodeName ?? plan.facts.hostname,
    minBandwidthMbps: options.minBandwidth,
  }).catch((error: unknown) => {
    // The warnings often say why it failed (a route through another interface): log them first.
    if (error instanceof VerificationFailedError) {
      for (const warning of unsaid(error.report.warnings)) logger.warn(warning);
      const filter = reversePathSuspect(plan, error.report);
      if (filter !== null) error.details.push(filter);
    }
    throw error;
  });
  for (const warning of unsaid(report.warnings)) logger.warn(warning);
  if (reaches(plan.verify.level, 'collective')) await collective(plan, options, logger, report);
  const reached = report.results.filter((result) => result.ok).length;
  logger.info(
    `verify ${report.level}: passed over ${report.interface} (${report.localAddress}), ${reached} check(s) in ${report.elapsedMs} ms`,
  );
  return report;
}

/**
 * SPEC "Verification", level collective: once peers has passed, the job's
 * own stack runs one collective (src/collective); its report joins the
 * peers report, and a failed verdict is the same 75 as a failed probe.
 */
async function collective(
  plan: Plan,
  options: Options,
  logger: Logger,
  report: VerifyReport,
): Promise<void> {
  // An etcd rendezvous keeps its state under the job's id after the miniature
  // has gone (torch's etcd_rendezvous.py), where the real job would meet it;
  // the static and c10d stores live in torchrun's agent and go with it.
  if (!['static', 'c10d'].includes(plan.job.rdzvBackend)) {
    logger.warn(
      `verify collective: skipped, the ${plan.job.rdzvBackend} rendezvous would keep the miniature's state under the job's id, where the real job meets it; checked as far as peers`,
    );
    return;
  }
  const { verifyCollective } = await import('../collective/collective.js');
  const { collectiveSummary } = await import('../collective/render.js');
  const env = plan.childEnv;
  const collective = await verifyCollective({
    plan,
    options,
    launcherFile: findLauncher(options.torchrun[0], env.PATH),
    peers: options.peers !== null ? plan.peers : [],
    logger,
  });
  report.collective = collective;
  for (const finding of collective.verdict.findings) {
    if (finding.level === 'warning') logger.warn(finding.message);
  }
  if (!collective.verdict.ok) {
    report.ok = false;
    throw collectiveFailure(report, collective);
  }
  logger.info(collectiveSummary(collective));
}

/** The collective's failure, 75, naming its first failing finding and how many more follow. */
function collectiveFailure(
  report: VerifyReport,
  collective: CollectiveReport,
): VerificationFailedError {
  const failures = collective.verdict.findings.filter((finding) => finding.level === 'failure');
  const lines = failures.map((finding) => finding.message);
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more, below)` : '';
  return new VerificationFailedError(
    `verification failed via ${report.interface} (${report.localAddress}): ${lines[0] ?? 'the collective failed'}${more}`,
    lines,
    report,
  );
}

/**
 * NCCL's socket transport's devices other than the decision's own (SPEC
 * "NCCL's own pick": a kept NCCL_SOCKET_IFNAME may match several); none
 * where its data plane is not the socket transport.
 */
function furtherDevices(plan: Plan): NcclBind[] {
  if (plan.transport.verdict.kind !== 'socket') return [];
  const { decision } = plan;
  return plan.nccl.devices.filter(
    (device) =>
      device.interface !== decision.interface || !sameAddress(device.address, decision.address),
  );
}

/**
 * SPEC "Readiness": a silent drop of what a peer sends here, where strict
 * reverse-path filtering on the chosen interface sends the route back
 * elsewhere (readiness/rp-filter.ts warned of it), is said in the failure:
 * the kernel, not a firewall, may be what timed out.
 */
export function reversePathSuspect(plan: Plan, report: VerifyReport): string | null {
  const finding = plan.readiness.findings.find(
    (candidate) => candidate.check === 'rp-filter' && candidate.level === 'warning',
  );
  if (finding === undefined) return null;
  const silent = report.results.some(
    (result) =>
      !result.ok && (result.error === 'timed out' || result.inbound?.error === 'timed out'),
  );
  if (!silent) return null;
  return `what timed out may be this host's reverse-path filter, not a firewall: ${finding.evidence}; fix: ${finding.fix}`;
}
