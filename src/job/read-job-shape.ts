import type { ClusterInfo, JobShape } from './job-shape.js';

/** Reads the job's shape from torchrun's argv, PET_*, MASTER_*, the cluster and torchrun's defaults. */
export function readJobShape(
  _torchrunArgv: readonly string[],
  _env: NodeJS.ProcessEnv,
  _cluster: ClusterInfo | null,
): JobShape {
  throw new Error('readJobShape: not implemented yet');
}
