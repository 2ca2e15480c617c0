import { closeSync, openSync, readSync } from 'node:fs';
import { attempt } from './attempt.js';

/** A sysfs attribute is at most a page (sysfs_emit's PAGE_SIZE) and comes whole in one read. */
const buffer = Buffer.alloc(4096);

/**
 * One sysfs attribute, without the newline sysfs_emit ends it with; null when
 * missing or unreadable (an attribute whose show() fails reads as an error).
 * open/read/close into one buffer: a third less time than readFileSync over
 * the thousands of GID slots of a RoCE host (rdma-gids.ts).
 */
export function readSysfsText(path: string): string | null {
  return (
    attempt(() => {
      const fd = openSync(path, 'r');
      try {
        return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0)).trim();
      } finally {
        closeSync(fd);
      }
    }) ?? null
  );
}
