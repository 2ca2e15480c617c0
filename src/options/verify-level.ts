/**
 * SPEC "Verification": how far the pre-flight goes, in order; each level
 * holds the ones before it (local ⊂ master; peers = local, the store host's
 * port, and the probe among all nodes; collective = peers, then one real
 * collective with the job's own launcher, torch and NCCL).
 */
export const VERIFY_LEVELS = ['none', 'local', 'master', 'peers', 'collective'] as const;

export type VerifyLevel = (typeof VERIFY_LEVELS)[number];

/** Whether `level` goes at least as far as `wanted`. */
export function reaches(level: VerifyLevel, wanted: VerifyLevel): boolean {
  return VERIFY_LEVELS.indexOf(level) >= VERIFY_LEVELS.indexOf(wanted);
}
