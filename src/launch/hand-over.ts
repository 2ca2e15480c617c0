/**
 * SPEC "Launch": torchrun replaces nccl-run. Node 20 cannot execve, so the
 * exec is bin/nccl-run's (a POSIX shell); Node hands it the launch as shell
 * words on the descriptor that the shell named in NCCLRUN_HANDOVER_FD:
 *
 *   export NCCL_SOCKET_IFNAME='=ens3f0'   each variable nccl-run sets
 *   shift 4                               past nccl-run's own argv tokens
 *   set -- torchrun "$@"                  the launcher's words, then torchrun's argv
 *
 * so torchrun's arguments are the shell's own "$@", bytes never decoded.
 * Where Node has process.execve (22.15+, 23.11+), the one-file build run by
 * plain `node` execs directly, its argv as Node decoded it.
 */
import { writeSync } from 'node:fs';
import { shellQuote } from '../env/format-env.js';
import { ConfigError } from '../errors.js';

/** The hand-over descriptor, read once and removed so the launcher never sees it. */
export function takeHandoverFd(env: NodeJS.ProcessEnv): number | null {
  const value = env.NCCLRUN_HANDOVER_FD;
  delete env.NCCLRUN_HANDOVER_FD;
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/**
 * While the shell waits for Node, a signal to the shell's pid (kill, a
 * scheduler, timeout(1)) ends it at once, before any exec; its Node child
 * must not go on verifying or holding ports. Linux re-parents an orphan, so
 * a changed parent pid means the shell is gone.
 */
export function stopWithParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 100).unref();
}

export interface Handover {
  /** The launcher found on PATH (find-launcher.ts). */
  file: string;
  /** The launcher's words (--torchrun), its first one looked up as `file`. */
  launcher: readonly string[];
  /** How many of nccl-run's argv tokens come before torchrun's. */
  ownTokens: number;
  /** torchrun's argv, for process.execve only. */
  torchrunArgv: readonly string[];
  /** Variables to set in the launcher's environment (those it would not inherit as they are). */
  exports: Record<string, string>;
  /** The launcher's whole environment, for process.execve only. */
  env: Record<string, string>;
}

export function handOver(handover: Handover, fd: number | null): void {
  if (fd !== null) {
    writeSync(fd, handoverScript(handover));
    return;
  }
  const execve = (process as { execve?: (file: string, args: string[], env: object) => never })
    .execve;
  if (execve === undefined) {
    throw new ConfigError(
      `this Node (${process.version}) cannot exec the launcher (process.execve is Node 22.15+): start nccl-run with its bin/nccl-run script, or use env/--dry-run for the variables`,
    );
  }
  execve(handover.file, [...handover.launcher, ...handover.torchrunArgv], handover.env);
}

export function handoverScript({ launcher, ownTokens, exports }: Handover): string {
  const lines = Object.entries(exports).map(
    ([name, value]) => `export ${name}=${shellQuote(value)}`,
  );
  lines.push(`shift ${ownTokens}`, `set -- ${launcher.map(shellQuote).join(' ')} "$@"`);
  return `${lines.join('\n')}\n`;
}
