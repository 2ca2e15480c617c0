/**
 * What every job command (run, explain, env, check) starts from: nccl-run's
 * settled options, its logger, and the plan, which every command makes from
 * the same facts (SPEC "The stack"): only what a command prints differs.
 */

import type { HandoverTarget } from '../launch/hand-over.js';
import { createLogger, type Logger } from '../log.js';
import type { Options } from '../options/option-table.js';
import { type Settled, settleOptions } from '../options/settle-options.js';
import { makePlan, type Plan } from '../plan/plan.js';
import { findingText } from '../readiness/finding.js';
import type { TorchrunArgs } from '../torch/torchrun-args.js';
import type { FailureLog } from './report-failure.js';
import type { SplitArgv } from './split-argv.js';

/** What main() knows of the job before the options are settled. */
export interface JobArgs {
  argv: readonly string[];
  split: SplitArgv;
  /** torchrun's part as every known torchrun reads it (misplaced-options.ts). */
  torchrunArgs: TorchrunArgs;
  env: NodeJS.ProcessEnv;
  /** Where bin/nccl-run waits for the launch; null under plain `node`. */
  handover: HandoverTarget | null;
}

export interface JobContext extends JobArgs {
  settled: Settled;
  options: Options;
  logger: Logger;
  /** main()'s failure log, which this context's logger joins. */
  failures: FailureLog;
}

export function startJob(args: JobArgs, failures: FailureLog): JobContext {
  const settled = settleOptions(args.split.flags, args.env, process.cwd());
  const { options } = settled;
  failures.format = options.logFormat;
  const logger = createLogger(options.logLevel, options.logFormat);
  failures.logger = logger;
  return { ...args, settled, options, logger, failures };
}

/** The plan, its warnings logged, and the whole decision at debug level: what explain prints, run logs. */
export async function planJob(job: JobContext): Promise<Plan> {
  const plan = await makePlan(
    job.split.torchrun,
    job.settled,
    job.env,
    job.logger,
    job.handover?.shell,
  );
  logDecision(job.logger, plan);
  return plan;
}

export function logDecision(logger: Logger, plan: Plan): void {
  for (const warning of plan.variables.warnings) logger.warn(warning);
  for (const finding of plan.readiness.findings) {
    if (finding.level === 'warning') logger.warn(findingText(finding));
  }
  logger.debug(
    { decision: plan.decision, set: plan.variables.set, kept: plan.variables.kept },
    'decided',
  );
}
