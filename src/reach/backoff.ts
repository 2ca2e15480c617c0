/**
 * Linux retransmits an unanswered SYN after 1s and then 3s (initial RTO of
 * 1s, doubling; RFC 6298 §2), so a 5s attempt survives two lost SYNs before
 * we start over with a fresh socket.
 */
export const ATTEMPT_MS = 5_000;
/** SPEC: "While waiting it logs progress". */
export const PROGRESS_EVERY_MS = 5_000;

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

/**
 * How far apart a job's nodes make their first ask, and how long the
 * registry has them wait between asks: a quarter of a millisecond per node,
 * within 100 ms and 2 s, so the master meets about 4,000 requests a second
 * whatever the job's size, and 4,096 nodes started by one srun reach it over
 * a second instead of in one burst of SYNs.
 */
export function spreadMs(nodes: number): number {
  return Math.min(2_000, Math.max(100, Math.round(nodes / 4)));
}
