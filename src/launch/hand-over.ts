/**
 * SPEC "Launch": torchrun replaces nccl-run. Node 20 cannot execve, so the
 * exec is bin/nccl-run's (a POSIX shell), which runs Node in the background
 * and waits for it, so that any signal stops it at once. Node hands it the
 * launch as shell words in the file the shell named in NCCLRUN_HANDOVER:
 *
 *   unset SHLVL                             what the shell added to the caller's environment
 *   export PWD='/home/me'                   what the shell changed in it
 *   export NCCL_SOCKET_IFNAME='=ens3f0'     each variable nccl-run sets
 *   shift 4                                 past nccl-run's own argv tokens
 *   set -- torchrun "$@"                    the launcher's words, then torchrun's argv
 *   _nccl_run_next=launch
 *
 * so torchrun's arguments are the shell's own "$@", bytes never decoded, and
 * its environment is the caller's, byte for byte: the shell's own changes are
 * undone, and the entries it cannot hold (names that are not identifiers, as
 * `BASH_FUNC_module%%`; dash drops them) are put back by `env` between the
 * shell and the launcher. A command that launches nothing writes
 * `_nccl_run_next=done`: a Node that exits 0 without either is not ours.
 * Without a shell (the single executable; the one-file build run by plain
 * `node` 22.15+), exec-launcher.ts execs directly.
 */
import { closeSync, ftruncateSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { encodeBytes } from '../byte-string.js';
import { signalStatus } from '../exit-status.js';
import { shellQuote } from '../shell-words.js';
import { execLauncher } from './exec-launcher.js';
import { findLauncher } from './find-launcher.js';
import { type Entry, environEntries } from './proc-strings.js';

/** Where bin/nccl-run waits for the hand-over: its file, and the shell's pid. */
export interface HandoverTarget {
  file: string;
  shell: number;
}

/** The shell's hand-over, read once and removed so that nothing Node starts sees it. */
export function takeHandoverTarget(env: NodeJS.ProcessEnv): HandoverTarget | null {
  const { NCCLRUN_HANDOVER: file, NCCLRUN_SHELL: shell } = env;
  delete env.NCCLRUN_HANDOVER;
  delete env.NCCLRUN_SHELL;
  if (file === undefined || file === '' || shell === undefined || !/^\d+$/.test(shell)) return null;
  return { file, shell: Number(shell) };
}

/**
 * The shell may be killed at any moment, also while Node is still starting;
 * it cannot take Node with it (SIGKILL), so Node watches its parent: the
 * shell's pid, given by the shell itself, since by the time Node reads its
 * parent a reaper may already have taken the orphan. Then Node removes the
 * hand-over file and stops, releasing the ports and pipes it holds.
 */
export function stopWithShell(target: HandoverTarget): void {
  const check = () => {
    if (process.ppid === target.shell) return;
    removeFile(target.file);
    // Its shell died by the one signal it cannot trap (SIGKILL): Node ends as if that reached it too.
    process.exit(signalStatus(constants.signals.SIGKILL));
  };
  check();
  setInterval(check, 100).unref();
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

export function handOver(handover: Handover, target: HandoverTarget | null): void {
  if (target !== null) {
    writeHandover(target, encodeBytes(handoverScript(handover, shellChanges(target.shell))));
    return;
  }
  execLauncher(handover.file, [...handover.launcher, ...handover.torchrunArgv], handover.env);
}

/** After a command that launched nothing (an empty file): the shell exits 0. */
export function handNothingOver(target: HandoverTarget): void {
  if (statSync(target.file, { throwIfNoEntry: false })?.size === 0) {
    writeHandover(target, Buffer.from('_nccl_run_next=done\n'));
  }
}

/**
 * How the shell's environment, which it will pass on, differs from the
 * caller's: the caller's is the shell's own starting environment
 * (/proc/PID/environ), the shell's is what it gave Node. Empty where /proc
 * cannot tell.
 */
export interface ShellChanges {
  /** Entries the shell would pass that the caller had not: valid names, to unset. */
  added: string[];
  /** The caller's entries the shell changed or dropped. */
  restored: Entry[];
}

const NO_CHANGES: ShellChanges = { added: [], restored: [] };

/** The shell passes these to Node alone (`NAME=value node ...`): they never reach the launcher. */
const OWN_VARIABLES = new Set(['NCCLRUN_HANDOVER', 'NCCLRUN_SHELL']);

export function shellChanges(shell: number): ShellChanges {
  let caller: Map<string, Entry>;
  let passed: Map<string, Entry>;
  try {
    caller = environEntries(shell);
    passed = environEntries();
  } catch {
    return NO_CHANGES;
  }
  for (const name of OWN_VARIABLES) passed.delete(name);
  const added = [...passed.keys()].filter((key) => !caller.has(key) && isShellName(key));
  const restored = [...caller.values()].filter(
    (entry) => passed.get(entry.name)?.value !== entry.value,
  );
  return { added, restored };
}

/** A name the shell can export or unset (POSIX: letters, digits, underscore; not a digit first). */
export function isShellName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/**
 * bash's `exec` lowers SHLVL in the environment it passes, whatever the
 * script exported: only env(1), after the shell, can put the caller's back.
 */
const REWRITTEN_AT_EXEC = new Set(['SHLVL']);

export function handoverScript(
  { file, launcher, ownTokens, exports }: Handover,
  changes: ShellChanges = NO_CHANGES,
): string {
  const byShell = (name: string) => isShellName(name) && !REWRITTEN_AT_EXEC.has(name);
  const unset = changes.added.filter(byShell);
  const restored = changes.restored.filter((entry) => byShell(entry.name));
  const env = envPrefix(
    changes.added.filter((name) => !byShell(name)),
    changes.restored.filter((entry) => !restored.includes(entry)),
  );
  // Without PATH the launcher is found where the exec would have found it (find-launcher.ts).
  const words =
    unset.includes('PATH') && !launcher[0]?.includes('/')
      ? [file, ...launcher.slice(1)]
      : [...launcher];
  const lines = [
    ...(unset.length > 0 ? [`unset ${unset.join(' ')}`] : []),
    ...[...restored, ...Object.entries(exports).map(([name, value]) => ({ name, value }))].map(
      ({ name, value }) => `export ${name}=${shellQuote(value)}`,
    ),
    `shift ${ownTokens}`,
    `set -- ${[...env, ...words].map(shellQuote).join(' ')} "$@"`,
    '_nccl_run_next=launch',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * `env -u NAME -- NAME=VALUE...`: env(1) sets what no shell can (names that
 * are not identifiers, SHLVL) in the launcher's environment; no words when
 * there is nothing to set. env takes every word with `=` up to the first
 * without for an entry, so a launcher word holding `=` cannot follow it.
 */
function envPrefix(unset: string[], entries: Entry[]): string[] {
  if (unset.length === 0 && entries.length === 0) return [];
  let env = '/usr/bin/env';
  try {
    env = findLauncher('env', process.env.PATH);
  } catch {
    // Then the exec itself says that env is missing: loud, where dropping the entries would be silent.
  }
  return [
    env,
    ...unset.flatMap((name) => ['-u', name]),
    '--',
    ...entries.map(({ name, value }) => `${name}=${value}`),
  ];
}

/** Into the file the shell made (never a new one: a shell that is gone has removed its own). */
function writeHandover(target: HandoverTarget, script: Buffer): void {
  const fd = openSync(target.file, 'r+');
  try {
    ftruncateSync(fd);
    writeSync(fd, script);
  } finally {
    closeSync(fd);
  }
}

function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {}
}
