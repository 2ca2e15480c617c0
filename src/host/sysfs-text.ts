import { readFileSync } from 'node:fs';
import { attempt } from './attempt.js';

/**
 * One sysfs attribute, without the newline sysfs_emit ends it with; null when
 * missing or unreadable (an attribute whose show() fails reads as an error).
 */
export function readSysfsText(path: string): string | null {
  return attempt(() => readFileSync(path, 'utf8').trim()) ?? null;
}
