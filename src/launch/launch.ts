import type { Logger } from '../log.js';

/**
 * SPEC "Launch": runs the command without a shell, stdio inherited, forwards
 * signals once each, waits for it, and returns its exit status (128 + N for
 * a signal death). LauncherError 127/126 when it cannot start.
 */
export async function launch(_command: readonly string[], _env: NodeJS.ProcessEnv, _logger: Logger): Promise<number> {
  throw new Error('launch: not implemented yet');
}
