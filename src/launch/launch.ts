/**
 * SPEC "Launch", read as a procedure (tini's main): start the launcher
 * without a shell, relay signals, wait for it, and turn how it ended into
 * nccl-run's exit status. nccl-run never exits before the launcher does.
 */

import { EXIT, LauncherError } from '../errors.js';
import type { Logger } from '../log.js';
import { exitStatus } from './exit-status.js';
import { forwardSignals } from './forward-signals.js';

export async function launch(
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<number> {
  const [file, ...args] = command;
  if (file === undefined || file === '') {
    throw new LauncherError(
      'the launcher command is empty: give one with --torchrun, e.g. torchrun',
      EXIT.notFound,
    );
  }
  logger.debug({ command }, 'starting the launcher');
  const { launcher } = await start(file, args, env);
  const stopForwarding = forwardSignals(launcher, logger);
  try {
    return exitStatus(await launcher, file, env);
  } finally {
    stopForwarding();
  }
}

async function start(file: string, args: string[], env: NodeJS.ProcessEnv) {
  // Loaded here, not at the top: execa is the costliest import at start-up
  // (scripts/bench.js) and only a launch needs it, not explain, env or check.
  const { execa } = await import('execa');
  const launcher = execa(file, args, {
    env,
    // SPEC "What it exports": the launcher sees exactly the environment built for it.
    extendEnv: false,
    stdio: 'inherit',
    // A status, not an exception: every way the launcher ends maps to an exit code.
    reject: false,
    // A launcher that ignores SIGTERM is its own business: nccl-run only relays and waits.
    forceKillAfterDelay: false,
  });
  // Wrapped: the subprocess is a thenable, which returning it bare would await.
  return { launcher };
}
