/**
 * `nccl-run check`: resolve and verify, no launch; the exit status tells.
 * `--json` reports the decision and every peer, the failing ones above all.
 */
import { VerificationFailedError } from '../../verify/failure.js';
import { verifyPlan } from '../../verify/verify-plan.js';
import { type JobContext, planJob } from '../job-context.js';
import { checkJson, launchSummary } from '../render.js';

export async function checkCommand(job: JobContext): Promise<number> {
  const plan = await planJob(job);
  const { json } = job.options;
  job.logger.info(launchSummary(plan));
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
    return 0;
  } catch (error) {
    if (json && error instanceof VerificationFailedError) {
      process.stdout.write(`${JSON.stringify(checkJson(plan, error.report), null, 2)}\n`);
    }
    throw error;
  }
}
