/**
 * SPEC "Exit status", the shell's convention as tini keeps it: the launcher's
 * own code passes through, a death by signal N is 128 + N, a launcher that is
 * not found is 127 and one found but not runnable is 126.
 */
import { readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, join } from 'node:path';
import { EXIT, LauncherError } from '../errors.js';

/** How the launcher ended, as execa reports it with `reject: false`. */
export interface LauncherOutcome {
  exitCode?: number | undefined;
  signal?: keyof typeof constants.signals | undefined;
  /** Node's error code when it could not be started (ENOENT, EACCES...). */
  code?: string | undefined;
  originalMessage?: string | undefined;
}

/** nccl-run's status for a launcher that ran; a LauncherError for one that could not start. */
export function exitStatus(
  outcome: LauncherOutcome,
  command: string,
  env: NodeJS.ProcessEnv,
): number {
  if (outcome.signal !== undefined) return 128 + constants.signals[outcome.signal];
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  throw notStarted(command, outcome, env);
}

// libuv searches _PATH_DEFPATH when the launcher's environment has no PATH.
const DEFAULT_PATH = '/usr/bin:/bin';

function notStarted(command: string, outcome: LauncherOutcome, env: NodeJS.ProcessEnv) {
  const searched = env.PATH ?? DEFAULT_PATH;
  const file = locate(command, searched);
  if (outcome.code === 'ENOENT' && file === undefined) {
    const where = command.includes('/') ? 'no such file' : `not on PATH=${searched}`;
    return new LauncherError(
      `launcher "${command}" not found (${where}): install it or give its path with --torchrun`,
      EXIT.notFound,
    );
  }
  if (file !== undefined && outcome.code === 'ENOENT') {
    // execve(2) says ENOENT for a script whose #! interpreter is missing, e.g. a moved virtualenv.
    return new LauncherError(
      `launcher "${file}" cannot start: its interpreter "${interpreter(file)}" (the #! line) does not exist`,
      EXIT.notExecutable,
    );
  }
  if (outcome.code === 'EACCES') {
    return new LauncherError(
      `launcher "${file ?? command}" is not executable (EACCES): chmod +x it, or put its interpreter first in --torchrun`,
      EXIT.notExecutable,
    );
  }
  return new LauncherError(
    `launcher "${command}" cannot start: ${outcome.originalMessage ?? outcome.code ?? 'unknown error'}`,
    EXIT.notExecutable,
  );
}

/**
 * The file execvp(3) would try: the command itself when it holds a slash,
 * else the first regular file of that name on the PATH, executable or not.
 */
function locate(command: string, searchPath: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : searchPath.split(delimiter).map((dir) => join(dir === '' ? '.' : dir, command));
  return candidates.find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());
}

function interpreter(file: string): string {
  const firstLine = readFileSync(file, 'latin1').split('\n', 1)[0] ?? '';
  return firstLine.startsWith('#!') ? (firstLine.slice(2).trim().split(/\s+/)[0] ?? '') : '?';
}
