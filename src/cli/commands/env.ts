/** `nccl-run env`: only the variables nccl-run sets, for eval or an env file (SPEC "Outputs"). */
import { formatEnv } from '../../env/format-env.js';
import { type JobContext, planJob } from '../job-context.js';

export async function envCommand(job: JobContext): Promise<number> {
  const plan = await planJob(job);
  const { json, format } = job.options;
  process.stdout.write(formatEnv(plan.variables.set, json ? 'json' : format));
  return 0;
}
