/**
 * One value of the job's shape and where it came from (errors.ts `Origin`:
 * a bad one is 64 from torchrun's command line, 78 from anywhere else).
 */
import type { ClusterInfo } from '../cluster/scheduler.js';
import type { Origin } from '../errors.js';

export interface Setting {
  value: string;
  origin: Origin;
}

/** A value the cluster supplied; null when there is no cluster or it has none. */
export function clusterSetting(
  cluster: ClusterInfo | null,
  value: string | number | null | undefined,
): Setting | null {
  if (cluster === null || value === null || value === undefined) return null;
  return { value: String(value), origin: { name: cluster.kind, from: 'cluster' } };
}

/** What nothing gave: torchrun's own default (the one spelling of "not given"). */
export const DEFAULT_ORIGIN: Origin = { name: 'default', from: 'default' };

/** torchrun's own default. */
export function defaultSetting(value: string): Setting {
  return { value, origin: DEFAULT_ORIGIN };
}
