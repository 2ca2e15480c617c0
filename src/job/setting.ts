/**
 * One value of the job's shape and where it came from, and the one-line error
 * for a bad one: a UsageError when it came from torchrun's command line, a
 * ConfigError when it came from the environment or the cluster (SPEC "Exit status").
 */
import { ConfigError, type NcclRunError, UsageError } from '../errors.js';
import type { ClusterInfo } from './job-shape.js';

export interface Origin {
  /** The JobShape `source`: an option string as matched ("--master_addr"), a variable, "slurm", "default". */
  name: string;
  /** pet: a PET_* variable, which torchrun reads itself; env: another variable, which only nccl-run reads. */
  from: 'argv' | 'pet' | 'env' | 'cluster' | 'default';
}

export interface Setting {
  value: string;
  origin: Origin;
}

export function badValue(origin: Origin, value: string, expected: string): NcclRunError {
  if (origin.from === 'argv') {
    return new UsageError(`torchrun argument ${origin.name}: bad value '${value}': ${expected}`);
  }
  const what = origin.from === 'cluster' ? `${origin.name} (from the cluster)` : origin.name;
  return new ConfigError(`${what}: bad value '${value}': ${expected}`);
}

/** A value the cluster supplied; null when there is no cluster or it has none. */
export function clusterSetting(
  cluster: ClusterInfo | null,
  value: string | number | null | undefined,
): Setting | null {
  if (cluster === null || value === null || value === undefined) return null;
  return { value: String(value), origin: { name: cluster.kind, from: 'cluster' } };
}

/** torchrun's own default. */
export function defaultSetting(value: string): Setting {
  return { value, origin: { name: 'default', from: 'default' } };
}
