/**
 * SPEC "Launch": the launcher is looked up on PATH before anything else
 * runs, as execvp(3) will look it up at the exec, so that a launcher that
 * cannot start is the shell's 127 or 126 with a message naming the command
 * and where it was looked for, before a minute of verification, not after.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { EXIT, LauncherError } from '../errors.js';

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
  const files = candidates.filter((file) => statSync(file, { throwIfNoEntry: false })?.isFile());
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
  if (command.includes('/') && statSync(command, { throwIfNoEntry: false })?.isDirectory()) {
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
  const head = Buffer.alloc(256);
  let length = 0;
  try {
    const fd = openSync(file, 'r');
    try {
      length = readSync(fd, head);
    } finally {
      closeSync(fd);
    }
  } catch {
    return;
  }
  const firstLine = head.toString('latin1', 0, length).split('\n', 1)[0] ?? '';
  if (!firstLine.startsWith('#!')) return;
  const interpreter = firstLine.slice(2).trim().split(/\s+/)[0] ?? '';
  if (interpreter !== '' && !statSync(interpreter, { throwIfNoEntry: false })) {
    throw new LauncherError(
      `launcher "${file}" cannot start: its interpreter "${interpreter}" (the #! line) does not exist`,
      EXIT.notExecutable,
    );
  }
}
