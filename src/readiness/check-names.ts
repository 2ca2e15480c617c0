/**
 * The readiness checks by name (SPEC "Readiness"), in the order they run and
 * are shown: what `--skip-check` takes, and each finding's `check`.
 */
export const CHECK_NAMES = ['shm', 'memlock', 'nofile', 'mtu', 'rp-filter', 'gpus'] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

export function isCheckName(name: string): name is CheckName {
  return (CHECK_NAMES as readonly string[]).includes(name);
}
