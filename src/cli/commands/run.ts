/**
 * `nccl-run [OPTIONS] TORCHRUN_ARGS`: resolve, export, verify, then hand the
 * launch over, so that torchrun replaces nccl-run (SPEC "Launch"). The
 * launcher is looked up first, so that one that cannot start costs no wait.
 */
import { formatEnv } from '../../env/format-env.js';
import { findLauncher } from '../../launch/find-launcher.js';
import { handOver } from '../../launch/hand-over.js';
import { shellQuote } from '../../shell-words.js';
import { verifyPlan } from '../../verify/verify-plan.js';
import { type JobContext, planJob } from '../job-context.js';
import { launchSummary } from '../render.js';

export async function runCommand(job: JobContext): Promise<number> {
  const { options, settled, env, split } = job;
  const file = options.dryRun
    ? ''
    : findLauncher(options.torchrun[0], env.PATH ?? settled.envFileExtras.PATH);
  /** The launch with this environment; the shell exports what differs from its own. */
  const launch = (childEnv: Record<string, string>) => {
    handOver(
      {
        file,
        launcher: options.torchrun,
        ownTokens: job.argv.length - split.torchrun.length,
        torchrunArgv: split.torchrun,
        exports: Object.fromEntries(
          Object.entries(childEnv).filter(([name, value]) => env[name] !== value),
        ),
        env: childEnv,
      },
      job.handover,
    );
    return 0;
  };
  // SPEC: torchrun prints its help and exits; there is no job to resolve or verify.
  if (file !== '' && job.torchrunArgs.help) {
    return launch({ ...settled.envFileExtras, ...(env as Record<string, string>) });
  }
  const plan = await planJob(job);
  job.logger.info(launchSummary(plan));
  if (plan.transport.unmet !== null) throw plan.transport.unmet;
  // SPEC "Readiness": a node that will certainly fail the job is refused before any wait.
  if (plan.readiness.refused !== null) throw plan.readiness.refused;
  await verifyPlan(plan, options, job.logger);
  if (options.dryRun) {
    process.stdout.write(formatEnv(plan.variables.set, 'shell'));
    process.stdout.write(`${plan.command.map(shellQuote).join(' ')}\n`);
    return 0;
  }
  return launch(plan.childEnv);
}
