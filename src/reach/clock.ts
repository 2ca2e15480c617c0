import { setTimeout as delay } from 'node:timers/promises';

/** A monotonic deadline: wall-clock jumps (NTP, suspend) must not end or stretch a check. */
export interface Deadline {
  readonly startedAt: number;
  readonly totalMs: number;
  elapsedMs(): number;
  remainingMs(): number;
  passed(): boolean;
}

export function deadlineIn(totalMs: number): Deadline {
  const startedAt = performance.now();
  return {
    startedAt,
    totalMs,
    elapsedMs: () => performance.now() - startedAt,
    remainingMs: () => Math.max(0, startedAt + totalMs - performance.now()),
    passed: () => performance.now() >= startedAt + totalMs,
  };
}

/** Waits `ms`, but never past the deadline. */
export async function sleepUntil(ms: number, deadline: Deadline): Promise<void> {
  const wait = Math.min(ms, deadline.remainingMs());
  if (wait > 0) await delay(wait);
}

/** Resolves when `done` does, or at the deadline, whichever comes first. */
export function untilDeadline(done: Promise<void>, deadline: Deadline): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    done,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadline.remainingMs());
    }),
  ]).finally(() => clearTimeout(timer));
}

/** "12s", "1.5s", "800ms": how progress lines and failures speak of time. */
export function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  return Number.isInteger(Math.round(seconds * 10) / 10)
    ? `${Math.round(seconds)}s`
    : `${seconds.toFixed(1)}s`;
}
