/**
 * A private munged (shared/LAB.md "A real Slurm cluster"): its own key,
 * socket, pid, seed and log in a directory of the caller's, so that the
 * machine's /etc/munge and /run/munge are neither read nor touched. The
 * Slurm tier runs it as one of its daemons; a unit test starts one alone.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

/** Why munged cannot run here, or null when it can. */
export const mungeUnavailable: string | null = ['munged', 'munge', 'unmunge'].every((program) =>
  ['/usr/sbin', '/usr/bin', '/sbin'].some((dir) => existsSync(join(dir, program))),
)
  ? null
  : 'munge missing (apt-get install -y --no-install-recommends munge)';

/** munged's foreground command line for a key and socket in `dir`, which it writes the key into. */
export function mungedCommand(dir: string): { socket: string; argv: string[] } {
  // munged refuses a socket in a directory that not everyone may traverse.
  chmodSync(dir, 0o711);
  writeFileSync(join(dir, 'munge.key'), randomBytes(128), { mode: 0o600 });
  const socket = join(dir, 'munge.socket');
  return {
    socket,
    argv: [
      'munged',
      '--foreground',
      `--key-file=${join(dir, 'munge.key')}`,
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'munged.pid')}`,
      `--seed-file=${join(dir, 'munged.seed')}`,
      `--log-file=${join(dir, 'munged.log')}`,
    ],
  };
}

/** munged alone, up once its socket exists; stop() ends it by pid. */
export async function startMunged(dir: string): Promise<{ socket: string; stop(): Promise<void> }> {
  const { socket, argv } = mungedCommand(dir);
  const [command, ...args] = argv;
  const child = execa(command as string, args, { reject: false, stdin: 'ignore' });
  const stop = async () => {
    child.kill('SIGTERM');
    await child;
  };
  for (let waited = 0; !existsSync(socket); waited += 20) {
    if (child.exitCode !== null || waited > 10_000) {
      await stop();
      throw new Error(`munged did not start: ${(await child).stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { socket, stop };
}
