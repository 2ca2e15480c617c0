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

/**
 * The last attempt gets at least this long, even past the deadline: squeezed
 * into the final moments it could only time out, and would hide what the
 * earlier attempts learned (refused, another job's listener). A check may so
 * end this much after its timeout, well inside the "timeout plus one second"
 * the issue allows.
 */
export const MIN_ATTEMPT_MS = 250;

export function attemptBudgetMs(attemptMs: number, remainingMs: number): number {
  return Math.max(MIN_ATTEMPT_MS, Math.min(attemptMs, remainingMs));
}
