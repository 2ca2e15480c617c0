import { setTimeout as delay } from 'node:timers/promises';
import type { Deadline } from './clock.js';

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
