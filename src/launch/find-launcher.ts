/**
 * SPEC "Launch": the launcher is looked up on PATH before anything else
 * runs, as execvp(3) will look it up at the exec, so that a launcher that
 * cannot start is the shell's 127 or 126 with a message naming the command
 * and where it was looked for, before a minute of verification, not after.
 */
import {
  accessSync,
  closeSync,
  constants,
  openSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { LauncherError } from '../errors.js';
import { EXIT } from '../exit-status.js';

// execvp(3) searches confstr(_CS_PATH) when the environment has no PATH.
const DEFAULT_PATH = '/bin:/usr/bin';

/** The file the exec will run; a LauncherError (127 or 126) when it cannot. */
export function findLauncher(command: string | undefined, path: string | undefined): string {
  if (command === undefined || command === '') {
    throw new LauncherError(
      'the launcher command is empty: give one with --torchrun, e.g. torchrun',
      EXIT.notFound,
    );
  }
  const searched = path ?? DEFAULT_PATH;
  // execvp: a name with a slash is the file itself; otherwise each PATH
  // entry in turn (empty = the current folder), the first executable file
  // wins, and EACCES is the answer only when files exist but none may run.
  const candidates = command.includes('/')
    ? [command]
    : searched.split(delimiter).map((dir) => join(dir === '' ? '.' : dir, command));
  const denied: string[] = [];
  const files = candidates.filter((file) => {
    const found = lookUp(file);
    if (found === 'denied') denied.push(file);
    return found !== 'denied' && found?.isFile() === true;
  });
  const runnable = files.find(isExecutable);
  if (runnable !== undefined) {
    checkInterpreter(runnable);
    return runnable;
  }
  if (files[0] !== undefined) {
    throw new LauncherError(
      `launcher "${files[0]}" is not executable (EACCES): chmod +x it, or put its interpreter first in --torchrun`,
      EXIT.notExecutable,
    );
  }
  // execvp: a PATH folder it may not search is skipped, and EACCES is the answer if nothing else runs.
  if (denied[0] !== undefined) {
    throw new LauncherError(
      `launcher "${command}" cannot be looked up in ${dirname(denied[0])} (EACCES: this user may not search it), and no other PATH entry has it: give its path with --torchrun, or fix PATH`,
      EXIT.notExecutable,
    );
  }
  const self = lookUp(command);
  if (command.includes('/') && self !== 'denied' && self?.isDirectory()) {
    throw new LauncherError(
      `launcher "${command}" is a folder, not a program: give the launcher itself with --torchrun, e.g. ${join(command, 'torchrun')}`,
      EXIT.notExecutable,
    );
  }
  const where = command.includes('/') ? 'no such file' : `not on PATH=${searched}`;
  throw new LauncherError(
    `launcher "${command}" not found (${where}): install it or give its path with --torchrun`,
    EXIT.notFound,
  );
}

/** The file's stat; undefined where there is none; 'denied' where a folder on the way may not be searched. */
function lookUp(file: string): Stats | undefined | 'denied' {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES') return 'denied';
    return undefined;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * execve(2) fails with ENOENT for a script whose #! interpreter is missing
 * (a moved virtualenv's torchrun), which a shell reports as "not found"
 * for a file that plainly exists: say what is really missing.
 */
function checkInterpreter(file: string): void {
  const head = fileHead(file, 256);
  if (head === null) return;
  const firstLine = head.toString('latin1').split('\n', 1)[0] ?? '';
  if (!firstLine.startsWith('#!')) return;
  const interpreter = firstLine.slice(2).trim().split(/\s+/)[0] ?? '';
  if (interpreter !== '' && lookUp(interpreter) === undefined) {
    throw new LauncherError(
      `launcher "${file}" cannot start: its interpreter "${interpreter}" (the #! line) does not exist`,
      EXIT.notExecutable,
    );
  }
}

/** The first `length` bytes of a file (fewer if it is shorter); null where it cannot be read. */
export function fileHead(file: string, length: number): Buffer | null {
  const head = Buffer.alloc(length);
  try {
    const fd = openSync(file, 'r');
    try {
      return head.subarray(0, readSync(fd, head));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
