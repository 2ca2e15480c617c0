import type { ClusterInfo } from '../job/job-shape.js';

/** What Slurm or Kubernetes says about the job; null when none applies (or mode is none). */
export function detectCluster(
  _mode: 'auto' | 'slurm' | 'k8s' | 'none',
  _env: NodeJS.ProcessEnv,
): ClusterInfo | null {
  throw new Error('detectCluster: not implemented yet');
}
