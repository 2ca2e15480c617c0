/**
 * The schedulers a job's shape is filled in from (SPEC "Cluster fill-in",
 * --cluster), each one module behind one interface. Adding one (PBS, LSF) is
 * a module that exports a `Scheduler` (`as const satisfies Scheduler`, so its
 * name is a literal type) and its line in SCHEDULERS; --cluster's choices and
 * --cluster auto follow from the list.
 */
import { kubernetes } from './kubernetes.js';
import type { ClusterInfo, Scheduler } from './scheduler.js';
import { slurm } from './slurm-job.js';

/**
 * In --cluster auto's order: a Slurm job's SLURM_JOB_ID is decisive, even in
 * a pod of a Kubernetes cluster.
 */
export const SCHEDULERS = [slurm, kubernetes] as const;
export type SchedulerName = (typeof SCHEDULERS)[number]['name'];
export const SCHEDULER_NAMES = SCHEDULERS.map((scheduler) => scheduler.name) as SchedulerName[];

/**
 * What the scheduler says about the job; null when none applies (or mode is
 * none). auto: the first that detects its job; a named one without its
 * variables is a configuration error, never a silent fall-through.
 */
export function detectCluster(
  mode: string,
  env: NodeJS.ProcessEnv,
  schedulers: readonly Scheduler[] = SCHEDULERS,
): ClusterInfo | null {
  if (mode === 'none') return null;
  if (mode === 'auto') return schedulers.find((s) => s.detects(env))?.read(env) ?? null;
  const named = schedulers.find((s) => s.name === mode);
  if (named === undefined) throw new Error(`no scheduler named '${mode}'`);
  return named.read(env);
}
