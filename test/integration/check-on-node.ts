/**
 * `nccl-run check --json` as users run it (the built CLI, bin/nccl-run.js)
 * on a lab host: in a UTS namespace of its own, so the host name is the
 * node's (nccl-run names itself by it in the mesh), and a mount namespace
 * where what sysfs says about a NIC's speed may be replaced by a bind mount
 * (shared/LAB.md). The environment is PATH and what the test gives (Slurm's
 * variables, say); the working directory, a folder of the run's own removed
 * when it ends, holds no nccl-run.env. Every run is bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VerifyReport } from '../../src/verify/report.js';
import type { Lab } from '../lab/netns.js';

export const CLI = fileURLToPath(new URL('../../bin/nccl-run.js', import.meta.url));

export interface CheckRun {
  code: number;
  /** What check --json printed: the report, also on failure. */
  report: VerifyReport | null;
  /** The failure's log line (pino, level error), if any. */
  error: { message: string; details: string[] } | null;
  logs: { level: number; msg: string; details?: string[] }[];
}

export interface CheckOptions {
  hostname: string;
  /** nccl-run's options, then torchrun's arguments. */
  args: readonly string[];
  env?: Record<string, string>;
  /** Files to bind over /sys/class/net/IF/speed, by interface. */
  speeds?: Record<string, string>;
  /** Shell commands run first in the node's own mount namespace (a container's marker file, say). */
  prelude?: string;
  timeoutMs?: number;
  /** Aborting it stops the check (SIGTERM), as a requeue or a pod restart does. */
  cancelSignal?: AbortSignal;
}

export function startCheck(lab: Lab, host: string, options: CheckOptions): Promise<CheckRun> {
  const mounts = Object.entries(options.speeds ?? {}).map(
    ([iface, file]) => `mount --bind ${file} /sys/class/net/${iface}/speed && `,
  );
  const prelude = options.prelude === undefined ? '' : `${options.prelude} && `;
  const script = `hostname "$1" && shift && ${prelude}${mounts.join('')}exec node "$@"`;
  // SPEC: ./nccl-run.env is read by default; none may leak in from the checkout.
  const cwd = mkdtempSync(join(tmpdir(), 'ncr-check-on-node-'));
  const child = lab.exec(
    host,
    'unshare',
    [
      ...['--mount', '--uts', 'sh', '-c', script, 'sh', options.hostname],
      ...[CLI, 'check', '--json', '--log-format', 'json', ...options.args],
    ],
    {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...options.env },
      extendEnv: false,
      reject: false,
      timeout: options.timeoutMs ?? 60_000,
      ...(options.cancelSignal && { cancelSignal: options.cancelSignal }),
    },
  );
  const ended = child.finally(() => rmSync(cwd, { recursive: true, force: true }));
  return ended.then((result) => {
    const stdout = String(result.stdout).trim();
    const logs = String(result.stderr)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as CheckRun['logs'][number]);
    const failure = logs.find((line) => line.level === 50);
    return {
      code: result.exitCode ?? -1,
      report: stdout === '' ? null : (JSON.parse(stdout) as VerifyReport),
      error: failure ? { message: failure.msg, details: failure.details ?? [] } : null,
      logs,
    };
  });
}
