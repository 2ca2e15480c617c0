/**
 * Retry pacing for the master connect and the peer probe: exponential
 * backoff with "full jitter" (AWS Architecture Blog, "Exponential Backoff
 * And Jitter"): a uniform delay in [0, min(cap, base * 2^attempt)], so that
 * hundreds of nodes started by one srun do not knock on the master in step.
 */
export const BACKOFF_BASE_MS = 100;
export const BACKOFF_CAP_MS = 2_000;

/** The delay before retry number `attempt` (0 for the first retry). */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
