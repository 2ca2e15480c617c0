/**
 * iproute2's `ip`, the kernel's own answer to link kinds and routes. It is
 * optional: minimal containers lack it, and then callers fall back to
 * /sys and /proc. null means "ip could not answer" (not installed, or it failed).
 */
import { execa } from 'execa';

/** ip answers from netlink in milliseconds; anything slower is a wedged system, not an answer. */
const IP_TIMEOUT_MS = 10_000;

export interface IpRun {
  /** false when the `ip` binary is not on PATH. */
  installed: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export async function runIp(args: readonly string[]): Promise<IpRun> {
  const result = await execa('ip', args, { reject: false, timeout: IP_TIMEOUT_MS });
  return {
    installed: result.code !== 'ENOENT',
    exitCode: result.exitCode ?? null,
    stdout: result.stdout,
    stderr: result.stderr,
  };
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
