/**
 * /proc/PID/limits (fs/proc/base.c proc_pid_limits): a header, then one line
 * per resource, its name padded to 26 columns, the soft and the hard limit
 * ("unlimited" for RLIM_INFINITY) and the unit.
 */
import type { Limit, ResourceLimit } from './node-readiness.js';

export type LimitName = 'Max locked memory' | 'Max open files';

/** The named resource's limits from the file's text; null when the line is missing or unreadable. */
export function parseProcLimit(text: string, name: LimitName): ResourceLimit | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const [soft, hard] = line.slice(name.length).trim().split(/\s+/).map(limitValue);
    return soft === undefined || hard === undefined || soft === null || hard === null
      ? null
      : { soft, hard };
  }
  return null;
}

function limitValue(word: string): Limit | null {
  if (word === 'unlimited') return 'unlimited';
  return /^\d+$/.test(word) ? Number(word) : null;
}

/** Whether `limit` holds at least `amount`. */
export function atLeast(limit: Limit, amount: number): boolean {
  return limit === 'unlimited' || limit >= amount;
}

/** 64 KiB, 8 MiB, unlimited: as `ulimit -l` users read them. */
export function limitBytes(limit: Limit): string {
  if (limit === 'unlimited') return 'unlimited';
  if (limit >= 2 ** 20 && limit % 2 ** 20 === 0) return `${limit / 2 ** 20} MiB`;
  if (limit >= 1024 && limit % 1024 === 0) return `${limit / 1024} KiB`;
  return `${limit} bytes`;
}
