/**
 * Which cluster fills in what argv and the environment leave out
 * (SPEC "Cluster fill-in", --cluster). auto: Slurm when SLURM_JOB_ID is set;
 * otherwise Kubernetes when KUBERNETES_SERVICE_HOST (set in every pod) comes
 * with PyTorchJob variables; otherwise none. An explicit slurm or k8s without
 * its variables is a configuration error, never a silent fall-through.
 */
import type { ClusterInfo } from '../job/job-shape.js';
import { fromPyTorchJob, PYTORCHJOB_MARKERS } from './kubeflow-pytorchjob.js';
import { fromSlurm } from './slurm-job.js';

/** What Slurm or Kubernetes says about the job; null when none applies (or mode is none). */
export function detectCluster(
  mode: 'auto' | 'slurm' | 'k8s' | 'none',
  env: NodeJS.ProcessEnv,
): ClusterInfo | null {
  switch (mode) {
    case 'none':
      return null;
    case 'slurm':
      return fromSlurm(env);
    case 'k8s':
      return fromPyTorchJob(env);
    case 'auto':
      if (isSet(env.SLURM_JOB_ID)) return fromSlurm(env);
      if (
        isSet(env.KUBERNETES_SERVICE_HOST) &&
        PYTORCHJOB_MARKERS.some((name) => isSet(env[name]))
      ) {
        return fromPyTorchJob(env);
      }
      return null;
  }
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
