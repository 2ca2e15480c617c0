/**
 * The settings (origin.ts) the job's shape takes where torchrun's command
 * line and PET_* give none: the cluster's, then torchrun's own defaults.
 */
import type { ClusterInfo } from '../cluster/scheduler.js';
import type { Origin, Setting } from '../origin.js';

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
