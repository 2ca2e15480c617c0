/**
 * `nccl-run explain`: the interfaces, the trace, the variables and the
 * command; nothing launched. When the decision fails it still prints what
 * it learned, with the error, and exits with that error's status (SPEC
 * "Outputs"), so `explain --json > report.json` captures the failing case.
 */
import { NcclRunError } from '../../errors.js';
import { learnedBeforeFailure, makePlan } from '../../plan/plan.js';
import { type JobContext, logDecision } from '../job-context.js';
import { explainFailureJson, explainFailureText, explainJson, explainText } from '../render.js';
import { reportFailure } from '../report-failure.js';

export async function explainCommand(job: JobContext): Promise<number> {
  const { json } = job.options;
  let plan: Awaited<ReturnType<typeof makePlan>>;
  try {
    plan = await makePlan(
      job.split.torchrun,
      job.settled,
      job.env,
      job.logger,
      job.handover?.shell,
    );
  } catch (error) {
    const learned = learnedBeforeFailure(error);
    if (learned === undefined || !(error instanceof NcclRunError)) throw error;
    process.stdout.write(
      json
        ? `${JSON.stringify(explainFailureJson(learned, error), null, 2)}\n`
        : explainFailureText(learned, error),
    );
    // Where stdout goes to a file, the terminal still gets the one line; the details are in the report.
    return reportFailure(error, job.failures, { details: false });
  }
  logDecision(job.logger, plan);
  process.stdout.write(
    json ? `${JSON.stringify(explainJson(plan), null, 2)}\n` : explainText(plan),
  );
  return 0;
}
