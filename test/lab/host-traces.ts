/**
 * vitest's globalSetup (vitest.config.ts): the suite leaves the host as it
 * found it. Paths a test makes only inside a mount namespace of its own
 * (test/lab/private-dev.ts) are looked at before the first test and after
 * the last; one that appeared is a trace on the machine (issue 46: an empty
 * /dev/infiniband, left by a mount point made on the host's devtmpfs, makes
 * a later nccl-run here read "device files present"). A throw from the
 * teardown fails the run (vitest 3.2: an error in a global teardown is a
 * startup error, exit status 1).
 */
import { existsSync } from 'node:fs';

/** Made by the RDMA tiers inside their namespaces, never on the host. */
export const WATCHED_PATHS = ['/dev/infiniband'] as const;

/** The watched paths that exist now but did not before: the traces. */
export function tracesLeft(before: ReadonlySet<string>, exists = existsSync): string[] {
  return WATCHED_PATHS.filter((path) => exists(path) && !before.has(path));
}

export function setup(): () => void {
  const before = new Set(WATCHED_PATHS.filter((path) => existsSync(path)));
  return () => {
    const left = tracesLeft(before);
    if (left.length > 0)
      throw new Error(
        `the suite left ${left.join(', ')} on this host, absent before it ran: a test made it outside its own mount namespace (see test/lab/private-dev.ts); remove it with rmdir once no test runs`,
      );
  };
}
