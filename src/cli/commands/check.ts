/**
 * `nccl-run check`: resolve and verify, no launch; the exit status tells.
 * `--json` reports the decision and every peer, the failing ones above all.
 */
import { NcclRunError } from '../../errors.js';
import { learnedBeforeFailure, type Plan } from '../../plan/plan.js';
import { VerificationFailedError } from '../../verify/failure.js';
import type { VerifyReport } from '../../verify/report.js';
import { verifyPlan } from '../../verify/verify-plan.js';
import { type JobContext, planJob } from '../job-context.js';
import { checkFailureJson, checkJson, launchSummary, portRangeText } from '../render.js';

export async function checkCommand(job: JobContext): Promise<number> {
  const { json } = job.options;
  let plan: Plan;
  try {
    plan = await planJob(job);
  } catch (error) {
    // A refusal's check --json still says what was learned (SPEC "Outputs"), as explain's does.
    const learned = learnedBeforeFailure(error);
    if (json && learned !== undefined && error instanceof NcclRunError) {
      const report = checkFailureJson(learned, error, job.options.verify);
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    }
    throw error;
  }
  job.logger.info(launchSummary(plan));
  job.logger.info(portRangeText(plan.facts));
  // SPEC --require-transport: the commands that verify check it, before any wait.
  if (plan.transport.unmet !== null) throw plan.transport.unmet;
  // SPEC "Readiness": a node that will certainly fail the job is refused before any wait.
  if (plan.readiness.refused !== null) {
    if (json) process.stdout.write(`${JSON.stringify(checkJson(plan, null), null, 2)}\n`);
    throw plan.readiness.refused;
  }
  try {
    const report = await verifyPlan(plan, job.options, job.logger);
    if (json) process.stdout.write(`${JSON.stringify(checkJson(plan, report), null, 2)}\n`);
    else await printCollective(report);
    return 0;
  } catch (error) {
    if (json && error instanceof VerificationFailedError) {
      process.stdout.write(`${JSON.stringify(checkJson(plan, error.report), null, 2)}\n`);
    } else if (error instanceof VerificationFailedError) await printCollective(error.report);
    throw error;
  }
}

/** SPEC level collective: check's text has a Collective section, the links as bars. */
async function printCollective(report: VerifyReport | null): Promise<void> {
  if (report?.collective === undefined) return;
  const { collectiveText } = await import('../../collective/render.js');
  process.stdout.write(collectiveText(report.collective));
}
