/**
 * vitest's globalSetup (vitest.config.ts): the suite leaves the host as it
 * found it. Paths a test makes only inside a mount namespace of its own
 * (test/lab/private-dev.ts) are looked at before the first test and after
 * the last; one that appeared is a trace on the machine (issue 46: an empty
 * /dev/infiniband, left by a mount point made on the host's devtmpfs, makes
 * a later nccl-run here read "device files present"). So is the temporary
 * folder's: an entry of the suite's prefixes there at the end that was not
 * there at the start is a folder a test made and did not remove, or one
 * torchrun's agent made (torchelastic_*, its log folder, never removed)
 * outside a TMPDIR of its lab's own. nccl-run's own hand-over files
 * (bin/nccl-run: nccl-run.XXXXXX, removed before the launch) carry none of
 * these prefixes. A throw from the teardown fails the run (vitest 3.2: an
 * error in a global teardown is a startup error, exit status 1).
 */
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Made by the RDMA tiers inside their namespaces, never on the host. */
export const WATCHED_PATHS = ['/dev/infiniband'] as const;

/** The names of what the suite makes in the temporary folder (os.tmpdir(), /tmp unless TMPDIR says). */
export const TMP_PREFIXES = ['ncr-', 'nccl-run-', 'torchelastic_'] as const;

/** The watched paths that exist now but did not before: the traces. */
export function tracesLeft(before: ReadonlySet<string>, exists = existsSync): string[] {
  return WATCHED_PATHS.filter((path) => exists(path) && !before.has(path));
}

/** The entries of the temporary folder, by name, that carry one of the suite's prefixes. */
export function tmpEntries(names: readonly string[]): string[] {
  return names.filter((name) => TMP_PREFIXES.some((prefix) => name.startsWith(prefix)));
}

/** The temporary folder's entries of the suite's prefixes that are there now but were not before. */
export function tmpLeft(before: ReadonlySet<string>, now: readonly string[]): string[] {
  return tmpEntries(now)
    .filter((name) => !before.has(name))
    .sort();
}

export function setup(): () => void {
  const tmp = tmpdir();
  const before = new Set(WATCHED_PATHS.filter((path) => existsSync(path)));
  const tmpBefore = new Set(tmpEntries(readdirSync(tmp)));
  return () => {
    const problems: string[] = [];
    const left = tracesLeft(before);
    if (left.length > 0)
      problems.push(
        `the suite left ${left.join(', ')} on this host, absent before it ran: a test made it outside its own mount namespace (see test/lab/private-dev.ts); remove it with rmdir once no test runs`,
      );
    const leftInTmp = tmpLeft(tmpBefore, readdirSync(tmp));
    if (leftInTmp.length > 0)
      problems.push(
        `the suite left in ${tmp} what was not there before it ran: ${leftInTmp.map((name) => join(tmp, name)).join(', ')}: a test made it and did not remove it, or torchrun ran without a TMPDIR of its lab's own (or a second test run on this machine still uses it); remove it once no test runs`,
      );
    if (problems.length > 0) throw new Error(problems.join('; '));
  };
}
