import { setTimeout as delay } from 'node:timers/promises';
import type { Deadline } from './clock.js';

/** Waits `ms`, but never past the deadline. */
export async function sleepUntil(ms: number, deadline: Deadline): Promise<void> {
  const wait = Math.min(ms, deadline.remainingMs());
  if (wait > 0) await delay(wait);
}
