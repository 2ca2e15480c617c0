/**
 * iproute2's `ip`, the kernel's own answer to link kinds and routes. It is
 * optional: minimal containers lack it, and then callers fall back to
 * /sys and /proc. null means "ip could not answer" (not installed, or it failed).
 *
 * node:child_process rather than execa: this runs on every invocation, and
 * execa's import alone costs about 100 ms of start-up (scripts/bench.js).
 */
import { execFile } from 'node:child_process';

/** ip answers from netlink in milliseconds; anything slower is a wedged system, not an answer. */
const IP_TIMEOUT_MS = 10_000;

export interface IpRun {
  /** false when the `ip` binary is not on PATH. */
  installed: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export function runIp(args: readonly string[]): Promise<IpRun> {
  return new Promise((resolve) => {
    execFile(
      'ip',
      [...args],
      { timeout: IP_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = (error as NodeJS.ErrnoException | null)?.code;
        resolve({
          installed: code !== 'ENOENT',
          exitCode: error === null ? 0 : typeof code === 'number' ? code : null,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** `ip -j ARGS` parsed; null when ip is missing, failed, or printed no JSON. */
export async function ipJson(args: readonly string[]): Promise<unknown | null> {
  const run = await runIp(['-j', ...args]);
  if (!run.installed || run.exitCode !== 0) return null;
  try {
    return JSON.parse(run.stdout);
  } catch {
    return null;
  }
}
